//! The wrapper's own stdin and stdout, each on a thread of its own with plain
//! blocking I/O: tokio's stdin and stdout hand every read and write to the
//! blocking pool, which cost more than the rest of the relay together; a
//! thread that reads or writes as much as there is costs one wake-up per burst.

use std::io::{BufRead, Write};

use tokio::sync::{mpsc, oneshot};

/// The client's lines, newline included (added to a last line without one), in
/// bursts: every complete line already read comes in one message, so a client
/// that writes fast costs one wake-up per burst. The channel closes at the end
/// of stdin.
pub(crate) fn read_lines() -> mpsc::UnboundedReceiver<Vec<Vec<u8>>> {
    let (sender, lines) = mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("stdin".to_owned())
        .spawn(move || {
            let mut stdin = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
            loop {
                let mut burst = Vec::new();
                loop {
                    let mut line = Vec::new();
                    match stdin.read_until(b'\n', &mut line) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(error) => {
                            crate::log(&format!("cannot read stdin: {error}"));
                            break;
                        }
                    }
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    burst.push(line);
                    if !stdin.buffer().contains(&b'\n') {
                        break;
                    }
                }
                if burst.is_empty() || sender.send(burst).is_err() {
                    return;
                }
            }
        })
        .expect("a thread starts");
    lines
}

/// Writes the lines for the client to stdout, flushing whenever none is queued;
/// the returned receiver is told when every sender is gone and all is written.
pub(crate) fn write_lines(mut lines: mpsc::UnboundedReceiver<Vec<u8>>) -> oneshot::Receiver<()> {
    let (done, all_written) = oneshot::channel();
    std::thread::Builder::new()
        .name("stdout".to_owned())
        .spawn(move || {
            let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
            while let Some(line) = lines.blocking_recv() {
                let mut written = stdout.write_all(&line);
                while written.is_ok()
                    && let Ok(line) = lines.try_recv()
                {
                    written = stdout.write_all(&line);
                }
                if let Err(error) = written.and_then(|()| stdout.flush()) {
                    crate::log(&format!("cannot write stdout: {error}"));
                    break;
                }
            }
            let _ = done.send(());
        })
        .expect("a thread starts");
    all_written
}
