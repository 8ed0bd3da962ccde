//! Command-line options, parsed by hand (a dozen flags; every error names the flag).

pub struct SendArgs {
    pub to: String,
    pub cc: String,
    pub bytes: Option<u64>,
    pub duration_s: Option<f64>,
    pub mss: Option<u32>,
    pub sndbuf: Option<u32>,
    pub interval_s: f64,
    pub flow: u32,
    /// How a timed flow ends at its deadline: reset (default; nothing drains after the run) or
    /// a graceful FIN after what is queued, so the kernel saves the connection's metrics.
    pub graceful: bool,
}

pub struct RecvArgs {
    pub port: u16,
    /// CLOCK_MONOTONIC time of the run's end: bytes read by then are reported apart.
    pub until: f64,
    pub rcvbuf: Option<u32>,
    pub conns: u32,
}

fn pairs(argv: &[String]) -> Result<Vec<(&str, &str)>, String> {
    if argv.len() % 2 != 0 {
        return Err(format!("option {} has no value", argv[argv.len() - 1]));
    }
    Ok(argv
        .chunks(2)
        .map(|c| (c[0].as_str(), c[1].as_str()))
        .collect())
}

fn num<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}: cannot read {v:?} as a number"))
}

impl SendArgs {
    pub fn parse(argv: &[String]) -> Result<Self, String> {
        let mut a = SendArgs {
            to: String::new(),
            cc: "cubic".into(),
            bytes: None,
            duration_s: None,
            mss: None,
            sndbuf: None,
            interval_s: 0.1,
            flow: 0,
            graceful: false,
        };
        for (k, v) in pairs(argv)? {
            match k {
                "--to" => a.to = v.to_string(),
                "--cc" => a.cc = v.to_string(),
                "--bytes" => a.bytes = Some(num(k, v)?),
                "--duration" => a.duration_s = Some(num(k, v)?),
                "--mss" => a.mss = Some(num(k, v)?),
                "--sndbuf" => a.sndbuf = Some(num(k, v)?),
                "--interval" => a.interval_s = num(k, v)?,
                "--flow" => a.flow = num(k, v)?,
                "--close" => {
                    a.graceful = match v {
                        "reset" => false,
                        "graceful" => true,
                        _ => {
                            return Err(format!("--close: {v:?} is not \"reset\" or \"graceful\""))
                        }
                    }
                }
                _ => return Err(format!("send: unknown option {k}")),
            }
        }
        if a.to.is_empty() {
            return Err("send: --to ADDR:PORT is required".into());
        }
        if a.bytes.is_none() == a.duration_s.is_none() {
            return Err("send: give exactly one of --bytes and --duration".into());
        }
        if a.duration_s.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
            return Err("send: --duration must be a positive number of seconds".into());
        }
        if !(a.interval_s > 0.0 && a.interval_s.is_finite()) {
            return Err("send: --interval must be a positive number of seconds".into());
        }
        Ok(a)
    }
}

impl RecvArgs {
    pub fn parse(argv: &[String]) -> Result<Self, String> {
        let mut a = RecvArgs {
            port: 0,
            until: f64::INFINITY,
            rcvbuf: None,
            conns: 1,
        };
        for (k, v) in pairs(argv)? {
            match k {
                "--port" => a.port = num(k, v)?,
                "--rcvbuf" => a.rcvbuf = Some(num(k, v)?),
                "--conns" => a.conns = num(k, v)?,
                "--until" => a.until = num(k, v)?,
                _ => return Err(format!("recv: unknown option {k}")),
            }
        }
        if a.port == 0 {
            return Err("recv: --port is required (1-65535)".into());
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(args: &[&str]) -> Result<SendArgs, String> {
        SendArgs::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn close_is_reset_unless_graceful_is_asked() {
        let base = ["--to", "10.0.0.2:5001", "--duration", "1"];
        assert!(!send(&base).unwrap().graceful);
        let mut g = base.to_vec();
        g.extend(["--close", "graceful"]);
        assert!(send(&g).unwrap().graceful);
        let mut bad = base.to_vec();
        bad.extend(["--close", "linger"]);
        let e = send(&bad).err().unwrap();
        assert!(e.starts_with("--close:"), "{e}");
    }
}
