//! The receiver: accept `--conns` connections, read each on its own thread until the peer closes, and report bytes and the first/last byte times per connection.

use crate::args::RecvArgs;
use crate::sock::{listen, now};
use serde_json::json;
use std::io::Read;

pub fn run(a: &RecvArgs) -> Result<String, String> {
    let l = listen(a.port, a.rcvbuf)?;
    // What the kernel made of --rcvbuf (Linux stores twice the value asked for); accepted
    // sockets inherit it.
    let rcvbuf_bytes = socket2::SockRef::from(&l)
        .recv_buffer_size()
        .map_err(|e| format!("SO_RCVBUF: {e}"))?;
    // The orchestrator starts senders once the listener is up: say so on stderr (stdout carries
    // the result).
    eprintln!("listening {}", a.port);
    let mut threads = Vec::new();
    for _ in 0..a.conns {
        let (mut s, peer) = l.accept().map_err(|e| format!("accept: {e}"))?;
        let until = a.until;
        threads.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let (mut bytes, mut first, mut last) = (0u64, f64::NAN, f64::NAN);
            let mut bytes_until = 0u64;
            loop {
                match s.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let t = now();
                        if bytes == 0 {
                            first = t;
                        }
                        last = t;
                        bytes += n as u64;
                        if t <= until {
                            bytes_until = bytes;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            json!({"peer": peer.to_string(), "bytes": bytes, "bytes_until": bytes_until,
                   "t_first": first, "t_last": last})
        }));
    }
    let conns: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().unwrap_or(json!(null)))
        .collect();
    Ok(
        json!({"role": "recv", "port": a.port, "rcvbuf_bytes": rcvbuf_bytes, "connections": conns})
            .to_string(),
    )
}
