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
use crate::sys::poll::{sleep_until, Epoll, Timer};
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
/// The longest sleep deaf to the sockets (and to the stop signal): links with longer delays
/// wake for arrivals when their next departure is further away than this.
const MAX_DEAF_NS: u64 = 10_000_000;
/// Turns of the loop that may send what fell due without looking at the sockets (or at the stop
/// signal) in between.
const MAX_UNPOLLED_TURNS: u32 = 4;
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
    /// The share of wall time the loop may be awake before it coalesces departures, and when
    /// it last woke.
    awake_budget: SpinBudget,
    awake_since: u64,
    started_ns: u64,
    warned_oversize: bool,
    /// Wake-ups and how many of them spun, for the report.
    wakeups: u64,
    spins: u64,
    /// Lateness allowed to batch departures once the spin budget is spent (tuning.coalesce_ns),
    /// the shortest propagation delay of any direction, how many sleeps ignored arrivals and
    /// how many of them coalesced.
    coalesce_ns: u64,
    min_delay_ns: u64,
    deaf_sleeps: u64,
    coalesced_sleeps: u64,
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

/// Frames the links can hold at once when full-size frames fill every queue and every pipe
/// (one bandwidth-delay product each), plus one receive batch per port: the slab is sized and
/// touched for this at start-up, so that a saturated link does not grow it while departures
/// are due. Capped at 1 GiB of slots (smaller frames beyond it grow the slab as needed).
fn initial_slots(cfg: &Config, frame_bytes: usize, ports: usize) -> usize {
    let mut n = ports * cfg.tuning.batch();
    for l in &cfg.links {
        for d in [&l.ab, &l.ba] {
            let ser = d.rate.tx_time(frame_bytes as u64).as_nanos().max(1);
            let pipe = d.delay.as_nanos() / ser + 1;
            let queue = match (d.queue.limit_packets, d.queue.limit_bytes) {
                (Some(p), _) => p,
                (None, Some(b)) => b.div_ceil(frame_bytes as u64),
                (None, None) => 1000,
            };
            n = n.saturating_add((pipe + queue) as usize);
        }
    }
    n.min((1usize << 30) / frame_bytes.max(1))
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
        let initial_slots = initial_slots(&cfg, mtu + frame::ETH_HLEN, ports.len());
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
            awake_budget: SpinBudget::new(cfg.tuning.awake_share(), mono_ns()),
            awake_since: mono_ns(),
            coalesce_ns: cfg.tuning.coalesce_ns(),
            min_delay_ns: cfg
                .links
                .iter()
                .flat_map(|l| [l.ab.delay.as_nanos(), l.ba.delay.as_nanos()])
                .min()
                .unwrap_or(0),
            deaf_sleeps: 0,
            coalesced_sleeps: 0,
            slab: Slab::new(slot, initial_slots),
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
        let mut unpolled = 0;
        let mut spin_to = None;
        loop {
            let now = mono_ns();
            let next = self.next_deadline();
            // Dense departures: the loop has been awake for its share of the window already
            // (see spin_budget.rs; the same accounting as the spin's).
            let dense = self.coalesce_ns > 0
                && next.is_some_and(|n| n > now)
                && !self.awake_budget.allows(now);
            // Spin to the next departure only while the budget lasts.
            let spin_ok = !dense
                && self.spin_ns > 0
                && next.is_some_and(|n| n > now)
                && self.spin_budget.allows(now);
            // A departure is near: sleep to it deaf to the sockets, then read what arrived in
            // one go. Waking for every arrival as well as every departure costs a 1 Gb/s link
            // ~0.9 of a core on a virtual machine, which under SCHED_FIFO meets the kernel's
            // real-time throttle (departures then wait tens of ms). Exact for the arrivals:
            // they keep their kernel timestamps, and none can fall due before `n` while `n` is
            // nearer than the shortest propagation delay (each is due at arrival + delay or
            // later); a spin (at most `spin_ns`) may delay one on a link of smaller delay by
            // that much. When departures are dense, sleep `coalesce_ns` past `n` and send all
            // that are due in one batch.
            let deaf_span =
                self.min_delay_ns
                    .min(MAX_DEAF_NS)
                    .max(if spin_ok { self.spin_ns } else { 0 });
            let nev = match next {
                // Due already (it fell due while the last batch went out): send it first; the
                // sockets wait for the next sleep, but not more than a few turns.
                Some(n) if n <= now && unpolled < MAX_UNPOLLED_TURNS => {
                    unpolled += 1;
                    self.depart(&mut due, &mut freed, &mut tx);
                    continue;
                }
                Some(n) if n > now && n - now <= deaf_span => {
                    self.fall_asleep();
                    if dense {
                        sleep_until(n + self.coalesce_ns);
                        self.coalesced_sleeps += 1;
                    } else if spin_ok {
                        if n - now > self.spin_ns {
                            sleep_until(n - self.spin_ns);
                        }
                        // The spin comes after reading the sockets, right before sending.
                        spin_to = Some(n);
                    } else {
                        sleep_until(n);
                    }
                    self.awake_since = mono_ns();
                    self.deaf_sleeps += 1;
                    self.epoll.wait_ns(&mut evs, Some(0))?
                }
                _ => {
                    // Wait for an arrival or the deadline (less the spin, which the next turn
                    // of the loop then does deaf).
                    let wake = next.map(|n| if spin_ok { n - self.spin_ns } else { n });
                    // (A deadline already past gives a zero timeout: serve it at once.)
                    self.fall_asleep();
                    let nev = if self.use_timerfd {
                        self.timer.set(wake)?;
                        self.epoll.wait(
                            &mut evs,
                            if wake.is_some_and(|w| w <= now) {
                                0
                            } else {
                                -1
                            },
                        )?
                    } else {
                        self.epoll
                            .wait_ns(&mut evs, wake.map(|w| w.saturating_sub(now)))?
                    };
                    self.awake_since = mono_ns();
                    nev
                }
            };
            unpolled = 0;
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
            if let Some(n) = spin_to.take() {
                self.spin_to(n);
            }
            self.depart(&mut due, &mut freed, &mut tx);
        }
    }

    /// The loop is about to sleep: charge the time it was awake.
    fn fall_asleep(&mut self) {
        let t = mono_ns();
        self.awake_budget.spent(t.saturating_sub(self.awake_since));
        self.awake_since = t;
    }

    /// Spin until `n`, charging the spin budget.
    fn spin_to(&mut self, n: u64) {
        let from = mono_ns();
        if from >= n {
            return;
        }
        self.spins += 1;
        let mut t = from;
        while t < n {
            std::hint::spin_loop();
            t = mono_ns();
        }
        self.spin_budget.spent(t - from);
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
            "deaf_sleeps": self.deaf_sleeps,
            "coalesce_ns": self.coalesce_ns,
            "spin_ns": self.spin_ns,
            "spun_s": self.spin_budget.spun_ns as f64 * 1e-9,
            "spins_refused": self.spin_budget.refused,
            "awake_s": self.awake_budget.spun_ns as f64 * 1e-9,
            "coalesced_sleeps": self.coalesced_sleeps,
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
