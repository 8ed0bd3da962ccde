//! The event loop: one thread serves every link. Each interface has one AF_PACKET socket (opened
//! inside the interface's namespace); frames read on a link's `a` interface go through the `ab`
//! model and out of `b`, and the other way round.
//!
//! A wake-up drains the readable sockets (frames stamped with the kernel's receive time, so the
//! model sees true arrival instants even when the loop was busy), advances every model to now,
//! and sends every frame due. Between wake-ups the thread sleeps in epoll on the sockets, a
//! signalfd and a timerfd armed `spin_ns` before the next deadline; from there it spins on the
//! clock to the deadline (timer wake-up latency on a busy host is tens of µs, too much for
//! sub-0.2 ms accuracy; a spin of at most `spin_ns` per departure burst is the CPU price, capped
//! at `spin_share` of wall time so that a saturated fast link does not spin all the time).

use crate::config::{Config, ConfigError, End};
use crate::frame;
use crate::model::{Departure, DirParams, Fate, LinkModel};
use crate::slab::Slab;
use crate::spin_budget::SpinBudget;
use crate::stats::{direction_json, OutStats, Overflow};
use crate::sys::netns::{ns_path, with_netns};
use crate::sys::packet::{Batch, PacketSocket, RxMeta};
use crate::sys::poll::{Epoll, Timer};
use crate::sys::{mono_ns, real_ns, Fd};
use fatpipe_core::{RngStream, SimTime};
use fatpipe_net::packet::{Flags, PacketKind, SackBlocks};
use fatpipe_net::Packet;
use serde_json::json;
use std::io;

/// Why the emulator could not start.
#[derive(Debug)]
pub enum StartError {
    /// Bad input (exit status 2): a field of the configuration.
    Config(ConfigError),
    /// Anything else (exit status 1).
    Io(String),
}

struct Port {
    sock: PacketSocket,
    end: End,
    /// The direction this interface feeds.
    ingress: usize,
}

struct Dir {
    link: usize,
    name: &'static str,
    model: LinkModel,
    queue_kind: String,
    out_port: usize,
    out: OutStats,
    of: Overflow,
}

const TOKEN_SIGNAL: u64 = u64::MAX;
const TOKEN_TIMER: u64 = u64::MAX - 1;
/// Batches read from one socket per wake-up before departures are served again.
const MAX_RX_ROUNDS: usize = 8;

pub struct Emulator {
    cfg: Config,
    ports: Vec<Port>,
    dirs: Vec<Dir>,
    slab: Slab,
    batch: Batch,
    epoll: Epoll,
    timer: Timer,
    _signals: Fd,
    spin_ns: u64,
    spin_budget: SpinBudget,
    started_ns: u64,
    warned_oversize: bool,
    /// Wake-ups and how many of them spun, for the report.
    wakeups: u64,
    spins: u64,
    /// Sleep on a timerfd (else on epoll_pwait2's own timeout).
    use_timerfd: bool,
    /// The scheduling policy obtained.
    pub sched: String,
}

fn open_port(cfg: &Config, li: usize, side: &str, end: &End) -> Result<PacketSocket, StartError> {
    let at = format!("links[{li}].{side}");
    let rcvbuf = cfg.tuning.rx_buffer_bytes();
    match with_netns(&end.netns, || {
        PacketSocket::open(&end.ifname, rcvbuf, 4 << 20)
    }) {
        Err(e) => Err(StartError::Config(ConfigError::new(
            format!("{at}.netns"),
            format!(
                "cannot enter network namespace {:?} ({}): {e}",
                end.netns,
                ns_path(&end.netns).unwrap_or_default()
            ),
        ))),
        Ok(Err(e)) if e.raw_os_error() == Some(libc::ENODEV) => {
            Err(StartError::Config(ConfigError::new(
                format!("{at}.ifname"),
                format!(
                    "no interface {:?} in network namespace {:?}",
                    end.ifname, end.netns
                ),
            )))
        }
        Ok(Err(e)) if e.kind() == io::ErrorKind::InvalidInput => {
            Err(StartError::Config(ConfigError::new(
                format!("{at}.ifname"),
                format!("bad interface name {:?}", end.ifname),
            )))
        }
        Ok(Err(e)) => Err(StartError::Io(format!(
            "{at}: cannot open a packet socket on {:?} in {:?}: {e}",
            end.ifname, end.netns
        ))),
        Ok(Ok(s)) => Ok(s),
    }
}

impl Emulator {
    /// Open every socket (entering each interface's namespace) and build the models.
    pub fn open(cfg: Config, signals: Fd) -> Result<Emulator, StartError> {
        let io_err = |what: &str, e: io::Error| StartError::Io(format!("{what}: {e}"));
        let mut ports = Vec::new();
        let mut dirs = Vec::new();
        for (li, l) in cfg.links.iter().enumerate() {
            let sa = open_port(&cfg, li, "a", &l.a)?;
            let sb = open_port(&cfg, li, "b", &l.b)?;
            let (pa, pb) = (ports.len(), ports.len() + 1);
            let (dab, dba) = (dirs.len(), dirs.len() + 1);
            ports.push(Port {
                sock: sa,
                end: l.a.clone(),
                ingress: dab,
            });
            ports.push(Port {
                sock: sb,
                end: l.b.clone(),
                ingress: dba,
            });
            for (name, d, out_port) in [("ab", &l.ab, pb), ("ba", &l.ba, pa)] {
                let id = format!("{}/{name}", l.name);
                dirs.push(Dir {
                    link: li,
                    name,
                    model: LinkModel::new(
                        DirParams {
                            rate: d.rate,
                            delay: d.delay,
                            loss: d.loss,
                        },
                        d.queue.build(d.rate, cfg.seed, &id),
                        RngStream::new(cfg.seed, &format!("linkem/{id}/loss")),
                    ),
                    queue_kind: d.queue.kind.clone(),
                    out_port,
                    out: OutStats::default(),
                    of: Overflow::default(),
                });
            }
        }
        // A slot holds the largest frame any interface can carry (MTU + Ethernet header + a
        // VLAN tag), rounded to a cache line.
        let mtu = ports
            .iter()
            .map(|p| p.sock.mtu as usize)
            .max()
            .unwrap_or(1500);
        let slot = (mtu + frame::ETH_HLEN + 4).div_ceil(64) * 64;
        let epoll = Epoll::new().map_err(|e| io_err("epoll", e))?;
        let timer = Timer::new().map_err(|e| io_err("timerfd", e))?;
        epoll
            .add(signals.0, TOKEN_SIGNAL)
            .map_err(|e| io_err("epoll", e))?;
        epoll
            .add(timer.fd.0, TOKEN_TIMER)
            .map_err(|e| io_err("epoll", e))?;
        for (i, p) in ports.iter().enumerate() {
            epoll
                .add(p.sock.fd.0, i as u64)
                .map_err(|e| io_err("epoll", e))?;
        }
        let batch = cfg.tuning.batch();
        Ok(Emulator {
            spin_ns: cfg.tuning.spin_ns(),
            spin_budget: SpinBudget::new(cfg.tuning.spin_share(), mono_ns()),
            slab: Slab::new(slot, 4096),
            batch: Batch::new(batch),
            ports,
            dirs,
            epoll,
            timer,
            _signals: signals,
            started_ns: mono_ns(),
            warned_oversize: false,
            wakeups: 0,
            spins: 0,
            sched: String::new(),
            use_timerfd: cfg.tuning.timer.as_deref() == Some("timerfd"),
            cfg,
        })
    }

    fn next_deadline(&self) -> Option<u64> {
        self.dirs
            .iter()
            .filter_map(|d| d.model.next_deadline())
            .min()
            .map(|t| t.as_nanos())
    }

    /// Serve until SIGTERM/SIGINT (or the parent's death, which sends SIGTERM).
    pub fn run(&mut self) -> io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 32];
        let mut readable = vec![false; self.ports.len()];
        let mut freed = Vec::new();
        let mut due: Vec<Departure> = Vec::new();
        let mut meta: Vec<RxMeta> = Vec::with_capacity(self.batch.cap());
        let mut slots: Vec<u32> = Vec::with_capacity(self.batch.cap());
        let mut tx: Vec<(*const u8, usize)> = Vec::with_capacity(1024);
        loop {
            let now = mono_ns();
            let next = self.next_deadline();
            // Spin to the deadline only while the budget lasts (see spin_budget.rs).
            let spin_ns = if self.spin_ns > 0 && self.spin_budget.allows(now) {
                self.spin_ns
            } else {
                0
            };
            let timeout = if self.use_timerfd {
                match next {
                    None => {
                        self.timer.set(None)?;
                        -1
                    }
                    Some(n) if n <= now + spin_ns => 0,
                    Some(n) => {
                        self.timer.set(Some(n - spin_ns))?;
                        -1
                    }
                }
            } else {
                0
            };
            let nev = if self.use_timerfd {
                self.epoll.wait(&mut evs, timeout)?
            } else {
                let t = next.map(|n| n.saturating_sub(now + spin_ns));
                self.epoll.wait_ns(&mut evs, t)?
            };
            let timeout = if self.use_timerfd {
                timeout
            } else {
                match next {
                    Some(n) if n <= mono_ns() + spin_ns => 0,
                    _ => -1,
                }
            };
            self.wakeups += 1;
            for ev in &evs[..nev] {
                match ev.u64 {
                    TOKEN_SIGNAL => return Ok(()),
                    TOKEN_TIMER => self.timer.ack(),
                    i => readable[i as usize] = true,
                }
            }
            for (pi, r) in readable.iter_mut().enumerate() {
                if *r {
                    *r = false;
                    self.drain(pi, &mut meta, &mut slots, &mut freed)?;
                }
            }
            if nev == 0 && timeout == 0 {
                // Nothing arrived and a departure is within the spin window: spin to it.
                if let Some(n) = next {
                    let from = mono_ns();
                    if from < n {
                        self.spins += 1;
                        let mut t = from;
                        while t < n {
                            std::hint::spin_loop();
                            t = mono_ns();
                        }
                        self.spin_budget.spent(t - from);
                    }
                }
            }
            self.depart(&mut due, &mut freed, &mut tx);
        }
    }

    /// Read what is waiting on port `pi` (a bounded number of batches).
    fn drain(
        &mut self,
        pi: usize,
        meta: &mut Vec<RxMeta>,
        slots: &mut Vec<u32>,
        freed: &mut Vec<u32>,
    ) -> io::Result<()> {
        let fd = self.ports[pi].sock.fd.0;
        let di = self.ports[pi].ingress;
        let cap = self.batch.cap();
        for _ in 0..MAX_RX_ROUNDS {
            self.slab.reserve(cap);
            slots.clear();
            let mut bufs = Vec::with_capacity(cap);
            for _ in 0..cap {
                let s = self.slab.alloc();
                slots.push(s);
            }
            for &s in slots.iter() {
                let b = self.slab.slot_mut(s);
                bufs.push((b.as_mut_ptr(), b.len()));
            }
            // SAFETY: the slots are distinct and the slab does not move during the call.
            let n = unsafe { self.batch.recv(fd, &bufs, meta)? };
            let offset = real_ns().saturating_sub(mono_ns());
            let now = mono_ns();
            for (j, m) in meta.iter().enumerate() {
                let slot = slots[j];
                if m.truncated {
                    self.dirs[di].of.oversize += 1;
                    if !self.warned_oversize {
                        self.warned_oversize = true;
                        eprintln!(
                            "fatpipe-linkem: a frame of {} bytes on {:?} is larger than the MTU: \
                             switch off segmentation offloads (TSO/GSO/GRO) upstream; such frames \
                             are counted as overflow.oversize and not forwarded",
                            m.len, self.ports[pi].end.ifname
                        );
                    }
                    self.slab.release(slot);
                    continue;
                }
                self.slab.set_len(slot, m.len);
                let f = self.slab.frame_mut(slot);
                if m.csum_not_ready {
                    frame::complete_l4_checksum(f);
                }
                let info = frame::parse(f);
                let t = if m.ts_real_ns > 0 {
                    m.ts_real_ns.saturating_sub(offset).min(now)
                } else {
                    now
                };
                let flags = match info.ecn {
                    1 | 2 => Flags::ECT,
                    3 => Flags::ECT | Flags::CE,
                    _ => 0,
                };
                let pkt = Packet {
                    flow: info.flow,
                    dst: 0,
                    seq: slot as u64,
                    ts: t,
                    size: m.len as u32,
                    len: m.len as u32,
                    sack: SackBlocks::default(),
                    kind: if info.udp {
                        PacketKind::Datagram
                    } else {
                        PacketKind::Data
                    },
                    flags: Flags::new(flags),
                    epoch: 0,
                };
                let _: Fate = self.dirs[di].model.arrive(SimTime(t), pkt, freed);
            }
            for &s in &slots[n..] {
                self.slab.release(s);
            }
            for s in freed.drain(..) {
                self.slab.release(s);
            }
            if n < cap {
                break;
            }
        }
        Ok(())
    }

    /// Advance every model to now and send what is due.
    fn depart(
        &mut self,
        due: &mut Vec<Departure>,
        freed: &mut Vec<u32>,
        tx: &mut Vec<(*const u8, usize)>,
    ) {
        let now = mono_ns();
        for di in 0..self.dirs.len() {
            let d = &mut self.dirs[di];
            d.model.advance(SimTime(now), freed);
            due.clear();
            d.model.pop_due(SimTime(now), due);
            for s in freed.drain(..) {
                self.slab.release(s);
            }
            if due.is_empty() {
                continue;
            }
            tx.clear();
            for dep in due.iter() {
                if dep.ce {
                    frame::set_ce(self.slab.frame_mut(dep.slot));
                }
                let f = self.slab.frame(dep.slot);
                tx.push((f.as_ptr(), f.len()));
            }
            let fd = self.ports[self.dirs[di].out_port].sock.fd.0;
            let t_send = mono_ns();
            // SAFETY: the frames live in the slab, which does not change during the call.
            let sent = unsafe { self.batch.send(fd, tx) };
            let d = &mut self.dirs[di];
            d.of.send_failures += (tx.len() - sent) as u64;
            for dep in due.iter() {
                d.out
                    .record(dep.due.as_nanos(), t_send, dep.size, dep.back_to_back);
                self.slab.release(dep.slot);
            }
        }
    }

    /// The statistics as JSON (reads and resets the sockets' drop counters).
    pub fn report(&mut self) -> serde_json::Value {
        for p in &self.ports {
            let drops = p.sock.take_drops();
            self.dirs[p.ingress].of.rx_drops += drops;
        }
        let elapsed = mono_ns().saturating_sub(self.started_ns) as f64 * 1e-9;
        // SAFETY: plain data out-parameter.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let cpu = ru.ru_utime.tv_sec as f64
            + ru.ru_utime.tv_usec as f64 * 1e-6
            + ru.ru_stime.tv_sec as f64
            + ru.ru_stime.tv_usec as f64 * 1e-6;
        let mut links = Vec::new();
        let mut overflow_total = 0;
        for (li, l) in self.cfg.links.iter().enumerate() {
            let mut obj = json!({
                "name": l.name,
                "a": {"netns": l.a.netns, "ifname": l.a.ifname},
                "b": {"netns": l.b.netns, "ifname": l.b.ifname},
            });
            for d in self.dirs.iter().filter(|d| d.link == li) {
                let p = d.model.params();
                overflow_total += d.of.total();
                obj[d.name] = direction_json(
                    p.rate.bps(),
                    p.delay.as_nanos(),
                    p.loss,
                    d.model.frames_in,
                    d.model.bytes_in,
                    d.model.lost,
                    d.model.queue_stats(),
                    &d.queue_kind,
                    &d.out,
                    &d.of,
                    d.model.in_flight(),
                );
            }
            links.push(obj);
        }
        json!({
            "seed": self.cfg.seed,
            "elapsed_s": elapsed,
            "cpu_s": cpu,
            "wakeups": self.wakeups,
            "spins": self.spins,
            "spin_ns": self.spin_ns,
            "spun_s": self.spin_budget.spun_ns as f64 * 1e-9,
            "spins_refused": self.spin_budget.refused,
            "sched": self.sched,
            "timer": if self.use_timerfd { "timerfd" } else { "epoll_pwait2" },
            "batch": self.batch.cap(),
            "slot_bytes": self.slab.slot_size(),
            "overflow_total": overflow_total,
            "links": links,
        })
    }
}

/// Write `v` to `path` atomically (a temporary file renamed into place).
pub fn write_json(path: &str, v: &serde_json::Value) -> io::Result<()> {
    let tmp = format!("{path}.tmp{}", std::process::id());
    let mut text = serde_json::to_vec_pretty(v).expect("json");
    text.push(b'\n');
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
