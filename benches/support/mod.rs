//! What the bench binaries share: one criterion configuration, and a summary that
//! turns this run's estimates into the ratios and throughputs the targets name.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use criterion::Criterion;
use serde_json::Value;

#[path = "../../tests/support/complete.rs"]
pub mod complete;
#[path = "../../tests/support/failing_tool.rs"]
pub mod failing_tool;

/// Short settings, so that the whole suite stays within a few minutes; a command
/// line (`--measurement-time`, `--sample-size`, ...) still overrides them.
pub fn criterion() -> Criterion {
    Criterion::default()
        .output_directory(&output_directory())
        .without_plots()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
        .configure_from_args()
}

/// Where criterion writes its estimates: `$CRITERION_HOME`, else `target/criterion`.
fn output_directory() -> PathBuf {
    match std::env::var_os("CRITERION_HOME") {
        Some(home) => PathBuf::from(home),
        None => Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("the target directory holds tmp/")
            .join("criterion"),
    }
}

/// The estimates this run of the binary wrote, read back for the summary.
#[derive(Debug)]
pub struct Estimates {
    directory: PathBuf,
    started: SystemTime,
}

impl Estimates {
    /// Call before the first benchmark, so that older results are ignored.
    pub fn since_now() -> Self {
        Self {
            directory: output_directory(),
            started: SystemTime::now(),
        }
    }

    /// The median time of one iteration of `group/bench`, in nanoseconds, when
    /// this run measured it (not when it was filtered out or only tested).
    pub fn median_ns(&self, group: &str, bench: &str) -> Option<f64> {
        let path = self
            .directory
            .join(group)
            .join(bench)
            .join("new/estimates.json");
        let written = std::fs::metadata(&path)
            .and_then(|meta| meta.modified())
            .ok()?;
        if written < self.started {
            return None;
        }
        let estimates: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        estimates["median"]["point_estimate"].as_f64()
    }

    /// `numerator / denominator`, both from the same group of this run.
    pub fn ratio(&self, group: &str, numerator: &str, denominator: &str) -> Option<f64> {
        Some(self.median_ns(group, numerator)? / self.median_ns(group, denominator)?)
    }
}

/// A plain table on stdout, after criterion's own report.
#[derive(Debug, Default)]
pub struct Summary {
    rows: Vec<[String; 3]>,
}

impl Summary {
    /// Adds `figure` (skipped when it was not measured in this run), shown with
    /// `format`, and the target it is held against.
    pub fn row(
        &mut self,
        what: &str,
        figure: Option<f64>,
        format: fn(f64) -> String,
        target: &str,
    ) {
        if let Some(figure) = figure {
            self.rows
                .push([what.to_owned(), format(figure), target.to_owned()]);
        }
    }

    pub fn print(&self, title: &str) {
        if self.rows.is_empty() {
            return;
        }
        println!("\n{title}\n");
        println!("| measure | figure | target |");
        println!("|---|---|---|");
        for [what, figure, target] in &self.rows {
            println!("| {what} | {figure} | {target} |");
        }
    }
}

pub fn ratio(figure: f64) -> String {
    format!("{figure:.3}")
}

pub fn gib_per_s(figure: f64) -> String {
    format!("{figure:.2} GiB/s")
}

pub fn micros(figure: f64) -> String {
    format!("{:.2} µs", figure / 1_000.0)
}

pub fn nanos(figure: f64) -> String {
    format!("{figure:.0} ns")
}

/// Bytes per nanosecond as GiB/s.
pub fn throughput_gib_s(bytes: usize, ns: f64) -> f64 {
    bytes as f64 / ns * 1e9 / f64::from(1u32 << 30)
}

/// A routine measured by name, boxed so that every case can be looked up alike.
pub type Routine<'a> = Box<dyn FnMut() + 'a>;

/// For `BENCH_REPEAT=NAME:COUNT`: runs the routine criterion measures as `NAME`
/// `COUNT` times and nothing else, so that `valgrind --tool=callgrind` counts its
/// instructions (two counts, subtracted, give the cost of one iteration).
pub fn repeat<'a>(spec: &str, routine: impl FnOnce(&str) -> Option<Routine<'a>>) {
    let (name, count) = spec.split_once(':').unwrap_or((spec, "1"));
    let count: u64 = count.parse().expect("BENCH_REPEAT is NAME:COUNT");
    let mut run = routine(name).unwrap_or_else(|| panic!("no routine named {name}"));
    for _ in 0..count {
        run();
    }
}

/// time(`b`) / time(`a`), the median over rounds that each time a batch of `a`
/// and a batch of `b` back to back (in turns, `a` first or `b` first). Both see
/// the same load from the rest of the machine, which criterion's one-after-the-
/// other measurements do not.
pub fn paired_ratio(a: &mut dyn FnMut(), b: &mut dyn FnMut()) -> f64 {
    const ROUNDS: usize = 101;
    const BATCH_TIME: Duration = Duration::from_millis(2);
    let batch = batch_size(a, BATCH_TIME);
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|round| {
            let (time_a, time_b) = if round % 2 == 0 {
                let time_a = time_batch(a, batch);
                (time_a, time_batch(b, batch))
            } else {
                let time_b = time_batch(b, batch);
                (time_batch(a, batch), time_b)
            };
            time_b.as_secs_f64() / time_a.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ROUNDS / 2]
}

/// How many runs of `routine` take about `target`.
fn batch_size(routine: &mut dyn FnMut(), target: Duration) -> u32 {
    let mut batch = 1;
    while time_batch(routine, batch) < target && batch < 1 << 24 {
        batch *= 2;
    }
    batch
}

fn time_batch(routine: &mut dyn FnMut(), batch: u32) -> Duration {
    let started = std::time::Instant::now();
    for _ in 0..batch {
        routine();
    }
    started.elapsed()
}
