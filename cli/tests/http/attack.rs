//! Clients that try to hold the proxy's connections, and the limits that
//! close them, each in seconds with short limits given by options: heads
//! sent a byte at a time (slowloris), bodies that stop and answers never read
//! (and the upstream connections they would hold), and more idle connections
//! than the process has file descriptors, while a fresh client's call is
//! answered.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use crate::client_limits::{answering_upstream, call_answered, closed_within, start};
use crate::support::bounded;

/// How many attacking connections each test opens at once.
const ATTACKERS: usize = 20;

#[tokio::test]
async fn heads_sent_a_byte_at_a_time_are_closed_at_the_header_timeout() {
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &["--client-header-timeout", "1s"], None).await;
    let mut attackers = JoinSet::new();
    for _ in 0..ATTACKERS {
        let address = proxy.address;
        attackers.spawn(async move {
            let started = Instant::now();
            let mut stream = TcpStream::connect(address).await.unwrap();
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\nx-slow: ")
                .await
                .unwrap();
            // A byte every 100 ms, for at most 10 s: never a whole head.
            for _ in 0..100 {
                if stream.write_all(b"a").await.is_err()
                    || closed_within(&mut stream, Duration::from_millis(100)).await
                {
                    return Some(started.elapsed());
                }
            }
            None
        });
    }

    while let Some(closed) = bounded("the slow heads", attackers.join_next()).await {
        let after = closed
            .unwrap()
            .expect("a slow head is still open after 10 s");
        // Not at once: at the limit, give or take the sweep's period (a
        // tenth of it) and its lateness on a loaded machine.
        assert!(
            after >= Duration::from_millis(500),
            "closed after {after:?}"
        );
    }
    assert!(upstream.received().is_empty());
    call_answered(proxy.address).await;
}

/// What [`CountingUpstream`] does with a connection.
#[derive(Clone, Copy)]
enum Counted {
    /// Reads what comes, and never answers.
    Reads,
    /// Reads a request's head, then answers with a body that never ends.
    AnswersEndlessly,
}

/// An upstream counting the connections open to it.
struct CountingUpstream {
    address: SocketAddr,
    accepted: Arc<AtomicUsize>,
    open: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl CountingUpstream {
    async fn start(counted: Counted) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (accepted, open) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (accepting, opened) = (accepted.clone(), open.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                accepting.fetch_add(1, Ordering::SeqCst);
                opened.fetch_add(1, Ordering::SeqCst);
                let open = opened.clone();
                tokio::spawn(async move {
                    let mut buffer = [0; 4096];
                    let mut head = Vec::new();
                    while let Ok(read @ 1..) = stream.read(&mut buffer).await {
                        head.extend_from_slice(&buffer[..read]);
                        if matches!(counted, Counted::AnswersEndlessly)
                            && head.windows(4).any(|window| window == b"\r\n\r\n")
                        {
                            endless_answer(&mut stream).await;
                            break;
                        }
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Self {
            address,
            accepted,
            open,
            task,
        }
    }

    /// Waits until `count` connections have been opened to it.
    async fn accepted(&self, count: usize) {
        bounded("the upstream's connections", async {
            while self.accepted.load(Ordering::SeqCst) < count {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    }

    /// Waits until every connection to it is closed.
    async fn all_closed(&self) {
        bounded("the upstream's connections close", async {
            while self.open.load(Ordering::SeqCst) > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
}

/// Writes an answer whose chunked body never ends, until the connection
/// breaks.
async fn endless_answer(stream: &mut TcpStream) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n\
                transfer-encoding: chunked\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let mut chunk = b"4000\r\n".to_vec();
    chunk.extend_from_slice(&[b'x'; 0x4000]);
    chunk.extend_from_slice(b"\r\n");
    while stream.write_all(&chunk).await.is_ok() {}
}

impl Drop for CountingUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn bodies_that_stop_are_closed_at_the_body_timeout_with_their_upstream_connections() {
    let upstream = CountingUpstream::start(Counted::Reads).await;
    let url = format!("http://{}/mcp", upstream.address);
    let proxy = start(&url, &["--client-body-timeout", "1s"], None).await;
    // Forwarded as they stream (a path other than the endpoint): half a body,
    // or a head that announces 99,999,999,999 bytes and sends none; and, read
    // whole by the proxy at the endpoint, half a body.
    let forwarded = [
        "POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n0123456789",
        "POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 99999999999\r\n\r\n",
    ];
    let at_endpoint = "POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                       content-length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",";
    let mut clients = Vec::new();
    for n in 0..ATTACKERS {
        let request = match n % 3 {
            0 => at_endpoint,
            n => forwarded[n - 1],
        };
        let mut stream = TcpStream::connect(proxy.address).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        clients.push(stream);
    }
    let forwarded_count = (0..ATTACKERS).filter(|n| n % 3 != 0).count();
    upstream.accepted(forwarded_count).await;

    for (n, client) in clients.iter_mut().enumerate() {
        assert!(
            closed_within(client, Duration::from_secs(5)).await,
            "client {n} is still open"
        );
    }
    upstream.all_closed().await;
}

#[tokio::test]
async fn answers_the_client_does_not_read_are_closed_at_the_send_timeout_with_their_upstream() {
    let upstream = CountingUpstream::start(Counted::AnswersEndlessly).await;
    let url = format!("http://{}/mcp", upstream.address);
    let proxy = start(&url, &["--client-send-timeout", "1s"], None).await;
    let mut clients = Vec::new();
    for _ in 0..ATTACKERS / 4 {
        // A small receive buffer: the proxy's writes wait for room soon.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut stream = socket.connect(proxy.address).await.unwrap();
        stream
            .write_all(b"GET /download HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        clients.push(stream);
    }
    upstream.accepted(clients.len()).await;

    // The clients read nothing: the proxy gives up on them, and on what their
    // answers came from.
    upstream.all_closed().await;
}

/// Opens `count` connections to `address` that send nothing.
async fn idle_connections(address: SocketAddr, count: usize) -> Vec<TcpStream> {
    let mut idle = Vec::with_capacity(count);
    for _ in 0..count {
        idle.push(
            bounded("connect", TcpStream::connect(address))
                .await
                .unwrap(),
        );
    }
    idle
}

/// The lines of `log` that say an accept failed.
fn accept_failures(log: &str) -> usize {
    log.lines()
        .filter(|line| line.contains("cannot accept a connection"))
        .count()
}

#[tokio::test]
async fn seven_hundred_idle_connections_under_512_descriptors_leave_a_fresh_client_served() {
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &[], Some("512:512")).await;
    let _idle = idle_connections(proxy.address, 700).await;

    // At the cap (220 for 512 descriptors), each new connection closed the
    // one idle longest: the fresh client's, the newest, is served.
    call_answered(proxy.address).await;

    // The cap kept descriptors free: no accept failed for want of them.
    assert_eq!(accept_failures(&proxy.log()), 0, "{}", proxy.log());
}

#[tokio::test]
async fn out_of_descriptors_idle_connections_are_closed_and_a_fresh_client_served() {
    let upstream = answering_upstream().await;
    // A cap above what 512 descriptors hold: accepts fail for want of them.
    let proxy = start(
        &upstream.url(),
        &["--max-connections", "100000"],
        Some("512:512"),
    )
    .await;
    let started = Instant::now();
    let _idle = idle_connections(proxy.address, 700).await;

    call_answered(proxy.address).await;

    let log = proxy.log();
    let seconds = started.elapsed().as_secs() as usize;
    assert!(accept_failures(&log) >= 1, "{log}");
    assert!(accept_failures(&log) <= seconds + 1, "{log}");
}

#[tokio::test]
async fn a_client_still_sending_a_body_past_the_bound_is_not_reset_and_reads_its_413() {
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &[], None).await;
    let mut stream = TcpStream::connect(proxy.address).await.unwrap();
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
              transfer-encoding: chunked\r\n\r\n",
        )
        .await
        .unwrap();
    let call = crate::support::tool_call(1, "write");
    let chunk = |data: &[u8]| [format!("{:x}\r\n", data.len()).as_bytes(), data, b"\r\n"].concat();
    stream.write_all(&chunk(call.as_bytes())).await.unwrap();
    let spaces = chunk(&[b' '; 64 * 1024]);
    // 17 MiB, past the 16 MiB bound, written without reading: the proxy
    // answers 413 and ends its side while the client still sends.
    let sent = bounded("17 MiB sent", async {
        for _ in 0..17 * 16 {
            stream.write_all(&spaces).await?;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Still sending, well after the answer: a proxy that closed
        // without lingering has reset the connection by now.
        for _ in 0..16 {
            stream.write_all(&spaces).await?;
        }
        std::io::Result::Ok(())
    })
    .await;
    assert!(sent.is_ok(), "the connection was reset: {sent:?}");

    let mut answer = Vec::new();
    let read = bounded("the answer", async {
        let mut buffer = [0; 4096];
        while !answer.windows(4).any(|window| window == b"\r\n\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => answer.extend_from_slice(&buffer[..read]),
            }
        }
    });
    read.await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:?}");
    // The client closes: the proxy stops lingering and closes too.
    drop(stream);
    assert!(upstream.received().is_empty());
}
