//! The thread reading the client's lines: a request is registered and written
//! to the child's stdin by this thread itself (no hand-off on the way to the
//! child), a cancellation withdraws its request, a line that is no JSON is
//! answered `-32700`, anything else goes to the child as it is. Only the
//! envelope of a single message is read (see `envelope`); a batch is read
//! whole.

use std::fs::File;
use std::sync::Arc;

use tokio::sync::oneshot;

use crate::jsonrpc::envelope::{self, Envelope};
use crate::jsonrpc::layer_request::LayerRequest;
use crate::jsonrpc::message::{Answer, requests};
use crate::jsonrpc::nested;
use crate::jsonrpc::own_answer;
use crate::stdio::lines::{Line, Lines};
use crate::stdio::stack::Stack;

/// Starts the thread reading `stdin`; `closed` is told at its end, before the
/// child's stdin is closed: closing it waits for what is written to it, which
/// a child that does not read never takes, and the wrapper's grace starts
/// then all the same.
pub(crate) fn spawn(
    stack: Arc<Stack>,
    stdin: File,
    closed: oneshot::Sender<()>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("stdin".to_owned())
        .spawn(move || {
            // The client's lines are its own to bound.
            relay_client(&stack, Lines::new(stdin, usize::MAX));
            let _ = closed.send(());
            stack.child().input().close();
        })?;
    Ok(())
}

fn relay_client(stack: &Stack, mut lines: Lines) {
    let input = stack.child().input();
    loop {
        match lines.next() {
            Ok(Some(Line::Whole(line))) => client_line(stack, line),
            Ok(Some(Line::TooLong { .. })) => {}
            Ok(None) => break,
            Err(error) => {
                crate::telemetry::log(&format!("cannot read stdin: {error}"));
                break;
            }
        }
        if !lines.has_another() {
            input.flush();
        }
    }
}

fn client_line(stack: &Stack, line: &[u8]) {
    let child = stack.child();
    if is_blank(line) {
        // No message, so nothing the child could run: it goes on as it is,
        // unanswered, as a line between messages is.
        child.input().write(line);
        return;
    }
    match envelope::read(line) {
        Ok(Envelope::Single(fields)) if fields.is_request() => {
            let id = fields.id.clone().unwrap_or_default();
            let request = LayerRequest::single(fields);
            let is_tool_call = request.is_tool_call();
            stack.send(line, request, vec![(id, is_tool_call)], false);
        }
        Ok(Envelope::Single(fields)) => {
            // A cancellation of a request the child was told of already is
            // not sent again.
            if let Some(id) = fields.cancelled_id()
                && !child.withdraw(id)
            {
                return;
            }
            child.input().write(line);
        }
        Ok(Envelope::Batch) => client_whole(stack, line),
        // Nested past the envelope's limit: read whole, to any depth.
        Err(error) if error.is_too_deep() => client_whole(stack, line),
        Err(_) => refuse_unreadable(stack),
    }
}

/// Whether `line` holds JSON's whitespace only (an empty line, a `\r` left by
/// a client that ends its lines with CRLF).
fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
}

/// A line that is no JSON to the command is answered `-32700` and goes no
/// further: a server that reads more than JSON (the Python SDK takes `NaN`
/// and `Infinity`) would run its calls with no layer. The HTTP modes answer
/// such a body so too.
fn refuse_unreadable(stack: &Stack) {
    let error = own_answer::parse_error();
    stack.output().write_answer(Answer::made(error));
}

/// A batch, or a message nested too deep for its envelope: read whole, its
/// requests go through the layer when sent; its cancellations withdraw their
/// requests; it goes to the child whole.
fn client_whole(stack: &Stack, line: &[u8]) {
    let child = stack.child();
    let Ok(message) = nested::from_slice(line) else {
        refuse_unreadable(stack);
        return;
    };
    child.withdraw_cancelled_in(&message);
    let requests = requests(&message);
    if requests.is_empty() {
        // Notifications and responses to the child's requests pass as they are.
        child.input().write(line);
        return;
    }
    let batch = message.is_array();
    stack.send(line, LayerRequest::Whole(message), requests, batch);
}
