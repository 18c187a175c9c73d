//! A global allocator that counts the allocations of the current thread, and
//! [`count_allocations`] to read the count around a piece of code.
//!
//! Not part of `support/mod.rs`: a `#[global_allocator]` belongs only in the
//! test binaries that count, which include this file with
//! `#[path = "support/counting_allocator.rs"] mod counting_allocator;`.
#![allow(
    unsafe_code,
    reason = "a global allocator is an unsafe trait; this one only counts and forwards to System"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The system allocator, counting the allocations of the threads that ask for it.
struct CountingAllocator;

thread_local! {
    /// `Some(n)` while this thread counts: `n` allocations so far.
    static ALLOCATIONS: Cell<Option<usize>> = const { Cell::new(None) };
}

/// An allocation is any call that may take new memory: `alloc`, `alloc_zeroed`
/// and `realloc` (a string that grows is not sized up front).
fn note_allocation() {
    if let Some(count) = ALLOCATIONS.get() {
        ALLOCATIONS.set(Some(count + 1));
    }
}

// SAFETY (for every method): the calls are forwarded unchanged to `System`, which
// upholds the `GlobalAlloc` contract; the counting touches only a const-initialised
// thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `run` and returns what it returned (dropped by the caller, after the
/// count) and how many allocations it made on this thread.
pub(crate) fn count_allocations<T>(run: impl FnOnce() -> T) -> (T, usize) {
    ALLOCATIONS.set(Some(0));
    let output = run();
    let count = ALLOCATIONS
        .take()
        .expect("counting was switched off while counting");
    (output, count)
}
