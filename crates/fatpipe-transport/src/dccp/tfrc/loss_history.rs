//! TFRC receiver: loss detection, loss events, loss intervals, the loss event rate p, and the
//! receive rate X_recv.
//!
//! Spec: RFC 5348 §5 (loss event rate) and §6 (receiver), as profiled for DCCP by RFC 4342 §6 and
//! §10 (CCID 3); RFC 3448 §5 is the same algorithm except where noted.
//!
//! - **Loss detection** (§5.1): a packet counts as lost once [`NDUPACK`] = 3 packets with higher
//!   sequence numbers have arrived, so a packet reordered by fewer than three places is not a loss.
//!   An ECN-CE mark is a congestion indication too (§5.1, RFC 4342 §9). Sequence numbers are
//!   DCCP's, which count non-data packets as well; a gap the NDP Count option (RFC 4340 §7.7,
//!   RFC 4342 §6.1) shows to be only non-data packets is not a loss ([`Arrival::ndp`]).
//! - **Loss events** (§5.2): losses closer than one RTT to the start of the current loss event
//!   belong to it. Two ways to tell ([`LossEventRule`]):
//!   - `Rtt` (RFC 5348 §5.2): interpolate the lost packet's nominal arrival time between the
//!     packets received just before and after it, T_loss = T_before + (T_after − T_before)·
//!     (S_loss − S_before)/(S_after − S_before); a new event starts when T_loss > T_start + R, R
//!     being the RTT the sender puts on its data packets (§3.2.1).
//!   - `WindowCounter` (RFC 4342 §10.2): the sender's CCVal window counter advances by one every
//!     quarter RTT (RFC 4342 §8.1), modulo 16; a loss starts a new event when the counter of the
//!     packet received just before it is more than [`CCVAL_EVENT_GAP`] = 4 ahead (mod 16) of the
//!     current event's. A lost packet's own CCVal is unknown, hence the preceding packet's (ns-2.35
//!     does the same: `detectLossRecv` returns the win_count of the last data packet before the
//!     gap). This is what ns-2.35 `Agent/DCCP/TFRC` uses.
//! - **Loss intervals** (§5.3): I_i (i ≥ 1) is the number of sequence numbers from the first lost
//!   packet of event i to the first lost packet of the next (more recent) event; the open interval
//!   I_0 runs from the start of the most recent event to the highest sequence number received,
//!   counting both ends (ns-2.35 leaves out the far end: one packet less, which only shifts I_0).
//! - **Average** (§5.4): n = [`N_INTERVALS`] = 8 intervals, weights w_i = 1 for i < n/2 and
//!   2(n − i)/(n + 2) otherwise (1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2). I_tot0 = Σ_{i=0}^{k−1} w_i·I_i
//!   (with the open interval), I_tot1 = Σ_{i=1}^{k} w_{i−1}·I_i (without it), W_tot = Σ_{i<k} w_i,
//!   I_mean = max(I_tot0, I_tot1)/W_tot, p = 1/I_mean — taking the larger, the open interval
//!   counts only when it lowers p. k is the number of closed intervals known, at most n
//!   ([`Averaging::Rfc5348`], as RFC 5348 and Linux's `tfrc_lh_calc_i_mean`). ns-2.35 always sums
//!   over all n weights, counting intervals it does not have yet as zero ([`Averaging::Ns2`]), so
//!   right after the first loss its I_mean is (I_0 + I_1)/6, not max(I_0, I_1): about six times
//!   the RFC's p until eight loss events have been seen.
//! - **First interval** (§6.3.1): before the first loss there is no interval; at the first loss
//!   event the receiver invents I_1 as the interval the equation would need to allow the receive
//!   rate it has been seeing ([`super::equation::first_loss_interval`]); the caller supplies it
//!   (it owns X_recv, s and R) through a closure called only then.
//! - **History discounting** (§5.5, optional, off by default): when the open interval exceeds
//!   twice the average of the closed ones, the closed intervals are weighted down by DF =
//!   max(2·I_mean/I_0, [`DISCOUNT_THRESHOLD`] = 0.5) in I_tot0, so p falls faster after congestion
//!   ends; each closed interval keeps the product of the factors in force while it aged (DF_i).
//!   ns-2.35's DCCP agent does not discount (its `Agent/TFRC` sink does, with minDiscountRatio_ =
//!   0.5).
//! - **Receive rate** (§6.2, [`ReceiveRate`]): X_recv, the bytes received over a window ending now
//!   divided by its length. RFC 5348 §6.2 measures over the last R_m (the RTT the data packets
//!   carry); RFC 4342 §8.3 defines the Receive Rate option as the rate "since the last
//!   acknowledgement", which its errata and ns-2.35 (`calcXrecv`) take over at least one RTT.
//!   After a silence the two differ hugely: since-last-feedback spreads the few packets of the new
//!   talk spurt over the whole silence.

use fatpipe_core::SimTime;
use std::collections::{BTreeMap, VecDeque};

/// NDUPACK: packets with higher sequence numbers that make a missing one lost (RFC 5348 §5.1).
pub const NDUPACK: usize = 3;
/// n: loss intervals averaged (RFC 5348 §5.4).
pub const N_INTERVALS: usize = 8;
/// Lower bound on the history-discount factor DF (RFC 5348 §5.5).
pub const DISCOUNT_THRESHOLD: f64 = 0.5;
/// Window-counter values per RTT (RFC 4342 §8.1: CCVal advances every quarter RTT).
pub const CCVAL_PER_RTT: u8 = 4;
/// CCVal wraps modulo 16 (RFC 4342 §8.1, a 4-bit header field).
pub const CCVAL_MODULUS: u8 = 16;
/// A loss starts a new event when its window counter is more than this ahead of the event's
/// (RFC 4342 §10.2: more than one RTT's worth of quarter-RTT increments).
pub const CCVAL_EVENT_GAP: u8 = CCVAL_PER_RTT;

/// How losses are grouped into loss events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossEventRule {
    /// RFC 5348 §5.2: interpolated loss times, one RTT (the `rtt` passed in) apart.
    Rtt,
    /// RFC 4342 §10.2: CCVal window counters more than 4 apart (mod 16). Needs
    /// [`Arrival::ccval`]; an arrival without one counts as CCVal 0.
    WindowCounter,
}

/// How the weighted average treats a history shorter than n intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Averaging {
    /// RFC 5348 §5.4: average over the k ≤ n closed intervals known.
    Rfc5348,
    /// ns-2.35 `tfrc_calcImean`: all n weights, missing intervals counted as 0, and I_mean ≥ 1.
    Ns2,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LossHistoryConfig {
    /// Packets above a hole that make it a loss ([`NDUPACK`]).
    pub ndupack: usize,
    /// Weights w_0..w_{n−1}; [`weights`]`(8)` by default.
    pub weights: Vec<f64>,
    pub rule: LossEventRule,
    pub averaging: Averaging,
    /// RFC 5348 §5.5 history discounting.
    pub discounting: bool,
}

impl Default for LossHistoryConfig {
    /// RFC 5348: NDUPACK 3, n = 8, RTT-separated events, average over known intervals, no
    /// discounting.
    fn default() -> Self {
        Self {
            ndupack: NDUPACK,
            weights: weights(N_INTERVALS),
            rule: LossEventRule::Rtt,
            averaging: Averaging::Rfc5348,
            discounting: false,
        }
    }
}

impl LossHistoryConfig {
    /// As ns-2.35 `Agent/DCCP/TFRC` (dccp/dccp_tfrc.cc): window-counter loss events, n-weight
    /// averaging with zeros, no discounting.
    pub fn ns2() -> Self {
        Self {
            rule: LossEventRule::WindowCounter,
            averaging: Averaging::Ns2,
            ..Self::default()
        }
    }
}

/// RFC 5348 §5.4 weights: w_i = 1 for i < n/2, else 2(n − i)/(n + 2).
pub fn weights(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            if i < n / 2 {
                1.0
            } else {
                2.0 * (n - i) as f64 / (n + 2) as f64
            }
        })
        .collect()
}

/// RFC 5348 §5.4 average loss interval for the open interval `open` (I_0) and the closed
/// intervals `closed` (I_1, I_2, … most recent first), with per-interval discount factors
/// `df_closed` (DF_i, 1 when not discounting) and the current general factor `df` (1 when not
/// discounting). Only the first `weights.len()` closed intervals are used.
pub fn average_interval(
    open: f64,
    closed: &[f64],
    weights: &[f64],
    averaging: Averaging,
    df_closed: &[f64],
    df: f64,
) -> f64 {
    let n = weights.len();
    let k = match averaging {
        Averaging::Rfc5348 => closed.len().min(n),
        Averaging::Ns2 => n,
    };
    if k == 0 {
        return open.max(1.0);
    }
    let ci = |i: usize| closed.get(i).copied().unwrap_or(0.0);
    let dfi = |i: usize| df_closed.get(i).copied().unwrap_or(1.0);
    // With I_0: I_0·w_0 + Σ_{i=1}^{k−1} I_i·w_i·DF_i·DF (closed[i−1] is I_i).
    let (mut tot0, mut w0) = (open * weights[0], weights[0]);
    for (i, &wi) in weights.iter().enumerate().take(k).skip(1) {
        let w = wi * dfi(i - 1) * df;
        tot0 += ci(i - 1) * w;
        w0 += w;
    }
    // Without I_0: Σ_{i=1}^{k} I_i·w_{i−1}·DF_i (closed[j] = I_{j+1} takes w_j).
    let (mut tot1, mut w1) = (0.0, 0.0);
    for (j, &wj) in weights.iter().enumerate().take(k) {
        let w = wj * dfi(j);
        tot1 += ci(j) * w;
        w1 += w;
    }
    let mean = (tot0 / w0).max(tot1 / w1);
    match averaging {
        Averaging::Rfc5348 => mean,
        // ns-2.35: `if (I_tot < W_tot) I_tot = W_tot`, so p ≤ 1.
        Averaging::Ns2 => mean.max(1.0),
    }
}

/// One packet as the receiver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// DCCP sequence number (48-bit, already extended; no wrap handling here).
    pub seq: u64,
    pub at: SimTime,
    /// CCVal window counter (0..15), for [`LossEventRule::WindowCounter`].
    pub ccval: Option<u8>,
    /// NDP Count (RFC 4340 §7.7): how many packets immediately before this one were non-data.
    /// A hole entirely covered by it is not a loss.
    pub ndp: Option<u64>,
    /// ECN Congestion Experienced: a congestion indication at this packet (RFC 5348 §5.1).
    pub ecn_ce: bool,
}

impl Arrival {
    pub fn new(seq: u64, at: SimTime) -> Self {
        Self {
            seq,
            at,
            ccval: None,
            ndp: None,
            ecn_ce: false,
        }
    }
    pub fn with_ccval(mut self, ccval: u8) -> Self {
        self.ccval = Some(ccval % CCVAL_MODULUS);
        self
    }
}

/// What one arrival changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArrivalOutcome {
    /// Packets newly declared lost (NDUPACK rule) or ECN-marked.
    pub congestion_indications: u32,
    /// Loss events newly started. RFC 5348 §6.1: the receiver sends feedback at once on one.
    pub new_loss_events: u32,
    /// The arrival was a duplicate or arrived after its sequence number had been resolved.
    pub ignored: bool,
}

#[derive(Clone, Copy, Debug)]
struct Held {
    at: SimTime,
    ccval: Option<u8>,
    ce: bool,
    /// A placeholder for a sequence number the NDP Count showed to be a non-data packet.
    phantom: bool,
}

#[derive(Clone, Copy, Debug)]
struct EventStart {
    seq: u64,
    at: SimTime,
    ccval: u8,
}

/// The receiver's loss history.
#[derive(Clone, Debug)]
pub struct LossHistory {
    cfg: LossHistoryConfig,
    /// Lowest sequence number not yet resolved as received or lost.
    next: Option<u64>,
    /// Packets at or above `next`, waiting for the holes below them to resolve.
    held: BTreeMap<u64, Held>,
    /// Real (non-phantom) packets in `held`.
    held_real: usize,
    /// The last resolved received packet (seq, time, ccval): "S_before" for interpolation.
    before: Option<(u64, SimTime, Option<u8>)>,
    highest: Option<u64>,
    current: Option<EventStart>,
    /// Closed intervals I_1, I_2, … (most recent first), at most n (n is small: shifting a Vec
    /// costs less than the allocation-free slices it buys for every average).
    closed: Vec<f64>,
    /// DF_i for each closed interval (RFC 5348 §5.5).
    df_closed: Vec<f64>,
    loss_events: u64,
    lost_packets: u64,
    marked_packets: u64,
}

impl LossHistory {
    pub fn new(cfg: LossHistoryConfig) -> Self {
        assert!(cfg.ndupack >= 1, "NDUPACK must be at least 1");
        assert!(!cfg.weights.is_empty(), "at least one loss-interval weight");
        Self {
            cfg,
            next: None,
            held: BTreeMap::new(),
            held_real: 0,
            before: None,
            highest: None,
            current: None,
            closed: Vec::new(),
            df_closed: Vec::new(),
            loss_events: 0,
            lost_packets: 0,
            marked_packets: 0,
        }
    }

    pub fn config(&self) -> &LossHistoryConfig {
        &self.cfg
    }

    /// Feed one arriving packet. `rtt` is the RTT estimate the data packets carry (RFC 5348
    /// §3.2.1), used by [`LossEventRule::Rtt`]. `first_interval` is called once, at the first loss
    /// event, for the synthetic interval I_1 in packets (RFC 5348 §6.3.1; see
    /// [`super::equation::first_loss_interval`]).
    pub fn on_packet(
        &mut self,
        a: Arrival,
        rtt: SimTime,
        first_interval: impl FnOnce() -> f64,
    ) -> ArrivalOutcome {
        let mut out = ArrivalOutcome::default();
        let next = *self.next.get_or_insert(a.seq);
        if a.seq < next || self.held.get(&a.seq).is_some_and(|h| !h.phantom) {
            out.ignored = true;
            return out;
        }
        // Replaces a phantom if the NDP Count had announced this (non-data) packet.
        self.held.insert(
            a.seq,
            Held {
                at: a.at,
                ccval: a.ccval,
                ce: a.ecn_ce,
                phantom: false,
            },
        );
        self.held_real += 1;
        self.highest = Some(self.highest.map_or(a.seq, |h| h.max(a.seq)));
        // NDP Count: the `ndp` sequence numbers just below this one were non-data packets.
        if let Some(k) = a.ndp {
            let lo = a.seq.saturating_sub(k).max(next);
            for s in lo..a.seq {
                self.held.entry(s).or_insert(placeholder());
            }
        }
        let mut first_interval = Some(first_interval);
        self.resolve(rtt, &mut first_interval, &mut out);
        out
    }

    fn resolve(
        &mut self,
        rtt: SimTime,
        first_interval: &mut Option<impl FnOnce() -> f64>,
        out: &mut ArrivalOutcome,
    ) {
        while let Some(next) = self.next {
            if let Some(h) = self.held.remove(&next) {
                self.next = Some(next + 1);
                if h.phantom {
                    continue;
                }
                self.held_real -= 1;
                self.before = Some((next, h.at, h.ccval));
                if h.ce {
                    self.marked_packets += 1;
                    out.congestion_indications += 1;
                    let ccval = h.ccval.unwrap_or(0);
                    self.congestion(next, h.at, ccval, rtt, first_interval, out);
                }
            } else if self.held_real >= self.cfg.ndupack {
                // `next` is missing and NDUPACK packets above it have arrived: lost.
                self.next = Some(next + 1);
                self.lost_packets += 1;
                out.congestion_indications += 1;
                let (after_seq, after) = self
                    .held
                    .iter()
                    .find(|(_, h)| !h.phantom)
                    .map(|(&s, h)| (s, *h))
                    .expect("held_real > 0");
                let at = match self.before {
                    Some((bs, bt, _)) => interpolate(bs, bt, after_seq, after.at, next),
                    None => after.at,
                };
                // The lost packet's CCVal is unknown: use the last one received before it.
                let ccval = self.before.and_then(|b| b.2).or(after.ccval).unwrap_or(0);
                self.congestion(next, at, ccval, rtt, first_interval, out);
            } else {
                break;
            }
        }
    }

    /// A congestion indication (loss or mark) at `seq`, in sequence order.
    fn congestion(
        &mut self,
        seq: u64,
        at: SimTime,
        ccval: u8,
        rtt: SimTime,
        first_interval: &mut Option<impl FnOnce() -> f64>,
        out: &mut ArrivalOutcome,
    ) {
        let start = EventStart { seq, at, ccval };
        let Some(cur) = self.current else {
            // RFC 5348 §6.3.1: the first loss event gets a synthetic preceding interval.
            let i1 = first_interval.take().map_or(1.0, |f| f()).max(1.0);
            self.closed.insert(0, i1);
            self.df_closed.insert(0, 1.0);
            self.current = Some(start);
            self.loss_events += 1;
            out.new_loss_events += 1;
            return;
        };
        let new_event = match self.cfg.rule {
            // "If T_old + R >= T_new, then S_new is part of the existing loss event."
            LossEventRule::Rtt => at > cur.at + rtt,
            LossEventRule::WindowCounter => {
                (ccval + CCVAL_MODULUS - cur.ccval) % CCVAL_MODULUS > CCVAL_EVENT_GAP
            }
        };
        if !new_event {
            return;
        }
        // Close the open interval. Discounting: the factor in force now becomes permanent for
        // the intervals that aged under it (RFC 5348 §5.5).
        let df = self.discount_factor();
        for d in self.df_closed.iter_mut() {
            *d *= df;
        }
        self.closed.insert(0, (seq - cur.seq) as f64);
        self.df_closed.insert(0, 1.0);
        let n = self.cfg.weights.len();
        self.closed.truncate(n);
        self.df_closed.truncate(n);
        self.current = Some(start);
        self.loss_events += 1;
        out.new_loss_events += 1;
    }

    /// The open interval I_0 (None before the first loss event).
    pub fn open_interval(&self) -> Option<f64> {
        let cur = self.current?;
        Some((self.highest.unwrap_or(cur.seq) - cur.seq + 1) as f64)
    }

    /// The closed intervals I_1, I_2, … (most recent first, at most n; I_1 is synthetic until
    /// the second loss event).
    pub fn closed_intervals(&self) -> impl Iterator<Item = f64> + '_ {
        self.closed.iter().copied()
    }

    /// RFC 5348 §5.5 general discount factor DF for the current open interval (1 when
    /// discounting is off or not warranted).
    pub fn discount_factor(&self) -> f64 {
        if !self.cfg.discounting {
            return 1.0;
        }
        let Some(open) = self.open_interval() else {
            return 1.0;
        };
        // I_mean of the closed intervals alone (the "without I_0" average).
        let (closed, dfc) = (&self.closed, &self.df_closed);
        let n = self.cfg.weights.len();
        let k = match self.cfg.averaging {
            Averaging::Rfc5348 => closed.len().min(n),
            Averaging::Ns2 => n,
        };
        let (mut tot, mut w) = (0.0, 0.0);
        for (i, &wi) in self.cfg.weights.iter().enumerate().take(k) {
            let wi = wi * dfc.get(i).copied().unwrap_or(1.0);
            tot += closed.get(i).copied().unwrap_or(0.0) * wi;
            w += wi;
        }
        if w <= 0.0 {
            return 1.0;
        }
        let mean = tot / w;
        if open > 2.0 * mean {
            (2.0 * mean / open).max(DISCOUNT_THRESHOLD)
        } else {
            1.0
        }
    }

    /// I_mean (None before the first loss event).
    pub fn mean_interval(&self) -> Option<f64> {
        let open = self.open_interval()?;
        Some(average_interval(
            open,
            &self.closed,
            &self.cfg.weights,
            self.cfg.averaging,
            &self.df_closed,
            self.discount_factor(),
        ))
    }

    /// The loss event rate p = 1/I_mean; 0 before the first loss event.
    pub fn loss_event_rate(&self) -> f64 {
        self.mean_interval().map_or(0.0, |m| 1.0 / m)
    }

    pub fn loss_events(&self) -> u64 {
        self.loss_events
    }
    /// Packets declared lost by the NDUPACK rule.
    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }
    /// ECN-CE-marked packets seen (after in-order resolution).
    pub fn marked_packets(&self) -> u64 {
        self.marked_packets
    }
    pub fn highest_seq(&self) -> Option<u64> {
        self.highest
    }
}

fn placeholder() -> Held {
    Held {
        at: SimTime::ZERO,
        ccval: None,
        ce: false,
        phantom: true,
    }
}

/// RFC 5348 §5.2: T_loss = T_before + (T_after − T_before)·(S_loss − S_before)/(S_after − S_before).
fn interpolate(
    s_before: u64,
    t_before: SimTime,
    s_after: u64,
    t_after: SimTime,
    s: u64,
) -> SimTime {
    let span = (s_after - s_before) as f64;
    let frac = (s - s_before) as f64 / span;
    let tb = t_before.as_nanos() as f64;
    let ta = t_after.as_nanos() as f64;
    SimTime::from_nanos((tb + (ta - tb) * frac).round().max(0.0) as u64)
}

/// Over which window X_recv is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XRecvWindow {
    /// RFC 5348 §6.2: bytes received in the last R, over R.
    LastRtt,
    /// RFC 4342 §8.3 Receive Rate (with its errata and as ns-2.35 `calcXrecv`): bytes since the
    /// last feedback over the time since it, or over the last R when that is shorter than R.
    SinceLastFeedback,
}

/// The receive-rate estimator X_recv (bytes/s).
#[derive(Clone, Debug)]
pub struct ReceiveRate {
    window: XRecvWindow,
    /// (arrival time, bytes) for the packets that may still fall in an RTT window.
    recent: VecDeque<(SimTime, u64)>,
    /// Bytes since the last feedback.
    since_feedback: u64,
    /// When the current since-feedback window began (last feedback, or first data).
    window_start: Option<SimTime>,
    /// Longest RTT seen, for pruning `recent`.
    keep: SimTime,
}

impl ReceiveRate {
    pub fn new(window: XRecvWindow) -> Self {
        Self {
            window,
            recent: VecDeque::new(),
            since_feedback: 0,
            window_start: None,
            keep: SimTime::ZERO,
        }
    }

    /// A data packet of `bytes` arrived at `now`; `rtt` is the current RTT estimate.
    pub fn on_data(&mut self, now: SimTime, bytes: u32, rtt: SimTime) {
        self.window_start.get_or_insert(now);
        self.since_feedback += bytes as u64;
        self.recent.push_back((now, bytes as u64));
        self.keep = self.keep.max(rtt);
        self.prune(now);
    }

    fn prune(&mut self, now: SimTime) {
        let horizon = now.saturating_sub(self.keep);
        while self.recent.front().is_some_and(|&(t, _)| t < horizon) {
            self.recent.pop_front();
        }
    }

    /// Bytes received in [now − rtt, now].
    fn bytes_in_last(&self, now: SimTime, rtt: SimTime) -> u64 {
        let from = now.saturating_sub(rtt);
        self.recent
            .iter()
            .rev()
            .take_while(|&&(t, _)| t >= from)
            .map(|&(_, b)| b)
            .sum()
    }

    /// X_recv at `now` for RTT `rtt` (> 0), bytes/s.
    pub fn x_recv(&self, now: SimTime, rtt: SimTime) -> f64 {
        let r = rtt.as_secs_f64();
        if r <= 0.0 {
            return 0.0;
        }
        match self.window {
            XRecvWindow::LastRtt => self.bytes_in_last(now, rtt) as f64 / r,
            XRecvWindow::SinceLastFeedback => {
                let t = now
                    .saturating_sub(self.window_start.unwrap_or(now))
                    .as_secs_f64();
                if t < r {
                    self.bytes_in_last(now, rtt) as f64 / r
                } else {
                    self.since_feedback as f64 / t
                }
            }
        }
    }

    /// Bytes received since the last feedback (RFC 5348 §6.2: no feedback without new data).
    pub fn bytes_since_feedback(&self) -> u64 {
        self.since_feedback
    }

    /// A feedback packet was sent at `now`: the since-feedback window restarts.
    pub fn on_feedback_sent(&mut self, now: SimTime) {
        self.since_feedback = 0;
        self.window_start = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    #[test]
    fn weights_match_rfc() {
        assert_eq!(weights(8), vec![1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]);
        // W_tot for n = 8: 4 + 0.8 + 0.6 + 0.4 + 0.2 = 6.
        assert!((weights(8).iter().sum::<f64>() - 6.0).abs() < 1e-12);
    }

    #[test]
    fn weighted_average_by_hand() {
        // RFC 5348 §5.4 with n = 8, I_0 = 50 (open) and I_1..I_8 = 100, 80, 120, 90, 110, 70,
        // 130, 60:
        //   I_tot0 = 1·50 + 1·100 + 1·80 + 1·120 + 0.8·90 + 0.6·110 + 0.4·70 + 0.2·130
        //          = 50 + 100 + 80 + 120 + 72 + 66 + 28 + 26 = 542
        //   I_tot1 = 1·100 + 1·80 + 1·120 + 1·90 + 0.8·110 + 0.6·70 + 0.4·130 + 0.2·60
        //          = 100 + 80 + 120 + 90 + 88 + 42 + 52 + 12 = 584
        //   W_tot = 6; I_mean = max(542, 584)/6 = 97.333; p = 0.010274
        let w = weights(8);
        let closed = [100.0, 80.0, 120.0, 90.0, 110.0, 70.0, 130.0, 60.0];
        let m = average_interval(50.0, &closed, &w, Averaging::Rfc5348, &[], 1.0);
        assert!((m - 584.0 / 6.0).abs() < 1e-9, "{m}");
        // A long open interval counts: I_0 = 400 gives I_tot0 = 542 − 50 + 400 = 892 > 584,
        // I_mean = 892/6 = 148.667.
        let m = average_interval(400.0, &closed, &w, Averaging::Rfc5348, &[], 1.0);
        assert!((m - 892.0 / 6.0).abs() < 1e-9, "{m}");
    }

    #[test]
    fn short_history_rfc_vs_ns2() {
        let w = weights(8);
        // One closed interval I_1 = 120, I_0 = 30. RFC 5348 (k = 1): max(30·1, 120·1)/1 = 120.
        let rfc = average_interval(30.0, &[120.0], &w, Averaging::Rfc5348, &[], 1.0);
        assert!((rfc - 120.0).abs() < 1e-9);
        // ns-2.35: I_tot0 = 30 + 120 = 150, I_tot1 = 120, W_tot = 6 → 25: p six times larger.
        let ns2 = average_interval(30.0, &[120.0], &w, Averaging::Ns2, &[], 1.0);
        assert!((ns2 - 25.0).abs() < 1e-9);
        // Two closed (120, 60), I_0 = 10. RFC (k = 2): I_tot0 = 10 + 120 = 130, I_tot1 = 120 + 60
        // = 180, W_tot = 2 → 90.
        let rfc = average_interval(10.0, &[120.0, 60.0], &w, Averaging::Rfc5348, &[], 1.0);
        assert!((rfc - 90.0).abs() < 1e-9);
    }

    /// Feed packets 0..total at 1 ms spacing, dropping those for which `lost` is true.
    fn run(
        h: &mut LossHistory,
        total: u64,
        rtt: SimTime,
        lost: impl Fn(u64) -> bool,
        first: f64,
    ) -> u32 {
        let mut events = 0;
        for s in 0..total {
            if lost(s) {
                continue;
            }
            let o = h.on_packet(Arrival::new(s, ms(s)), rtt, || first);
            events += o.new_loss_events;
        }
        events
    }

    #[test]
    fn loss_every_k_packets_converges_to_one_over_k() {
        // Every 50th packet lost, packets 1 ms apart, RTT 10 ms: each loss is 50 ms after the
        // previous one, a new event each time; after 8 events the synthetic interval (1000) has
        // left the window and all closed intervals are 50.
        let mut h = LossHistory::new(LossHistoryConfig::default());
        let ev = run(&mut h, 1003, ms(10), |s| s % 50 == 49, 1000.0);
        assert_eq!(ev, 20);
        assert_eq!(h.lost_packets(), 20);
        assert!(h.closed_intervals().all(|i| i == 50.0));
        // I_0 ≤ 50 here, so I_tot1 = 50·6 wins: p = 1/50.
        assert!((h.loss_event_rate() - 0.02).abs() < 1e-12);
    }

    #[test]
    fn losses_within_one_rtt_are_one_event() {
        // Losses at 100, 105, 130 (1 ms apart → 100, 105, 130 ms) with RTT 50 ms: one event.
        // Then 160 (60 ms after the event start at 100): a new event, interval 160 − 100 = 60.
        let mut h = LossHistory::new(LossHistoryConfig::default());
        let ev = run(&mut h, 300, ms(50), |s| [100, 105, 130].contains(&s), 500.0);
        assert_eq!(ev, 1);
        assert_eq!(h.lost_packets(), 3);
        assert_eq!(h.closed_intervals().collect::<Vec<_>>(), vec![500.0]);
        let mut h = LossHistory::new(LossHistoryConfig::default());
        let ev = run(
            &mut h,
            300,
            ms(50),
            |s| [100, 105, 130, 160].contains(&s),
            500.0,
        );
        assert_eq!(ev, 2);
        assert_eq!(h.closed_intervals().collect::<Vec<_>>(), vec![60.0, 500.0]);
        // Open interval: 160 ..= 299.
        assert_eq!(h.open_interval(), Some(140.0));
    }

    #[test]
    fn rtt_rule_uses_interpolated_loss_time() {
        // Packets 0..=9 at 0..9 ms; 10..=19 lost; 20.. at 100 ms + 1 ms each (a 90 ms outage).
        // Interpolated between (9, 9 ms) and (20, 100 ms): T(s) = 9 + 91·(s − 9)/11 ms, so
        // T(10) = 17.27, T(16) = 66.91, T(17) = 75.18. RTT 50 ms: 10..=16 are within 50 ms of
        // T(10) (≤ 67.27) and form one event; 17 starts the next (18, 19 join it). I_1 = 17 − 10.
        let mut h = LossHistory::new(LossHistoryConfig::default());
        let mut events = 0;
        for s in (0..10).chain(20..40) {
            let at = if s < 10 { ms(s) } else { ms(100 + (s - 20)) };
            events += h
                .on_packet(Arrival::new(s, at), ms(50), || 1000.0)
                .new_loss_events;
        }
        assert_eq!(h.lost_packets(), 10);
        assert_eq!(events, 2);
        assert_eq!(h.closed_intervals().next(), Some(7.0));
    }

    #[test]
    fn reordering_within_ndupack_is_not_loss() {
        // 5 arrives after 6, 7 (two later packets): not lost. 12 arrives after 13, 14, 15 (three):
        // declared lost when 15 arrives, and its late arrival is ignored.
        let mut h = LossHistory::new(LossHistoryConfig::default());
        let order = [0, 1, 2, 3, 4, 6, 7, 5, 8, 9, 10, 11, 13, 14, 15, 12, 16, 17];
        let mut ignored = 0;
        for (i, &s) in order.iter().enumerate() {
            let o = h.on_packet(Arrival::new(s, ms(i as u64)), ms(50), || 100.0);
            ignored += o.ignored as u32;
        }
        assert_eq!(h.lost_packets(), 1);
        assert_eq!(h.loss_events(), 1);
        assert_eq!(ignored, 1);
        // Custom NDUPACK = 4 tolerates the 3-place reordering.
        let mut h = LossHistory::new(LossHistoryConfig {
            ndupack: 4,
            ..LossHistoryConfig::default()
        });
        for (i, &s) in order.iter().enumerate() {
            h.on_packet(Arrival::new(s, ms(i as u64)), ms(50), || 100.0);
        }
        assert_eq!(h.lost_packets(), 0);
        assert_eq!(h.loss_event_rate(), 0.0);
    }

    #[test]
    fn ndp_count_gap_is_not_a_loss() {
        // 3 and 4 were non-data packets the receiver never saw; packet 5 says so (NDP = 2).
        let mut h = LossHistory::new(LossHistoryConfig::default());
        for s in [0, 1, 2, 5, 6, 7, 8, 9] {
            let mut a = Arrival::new(s, ms(s));
            if s == 5 {
                a.ndp = Some(2);
            }
            h.on_packet(a, ms(50), || 100.0);
        }
        assert_eq!(h.lost_packets(), 0);
        // Without the option the same gap is two losses (one event).
        let mut h = LossHistory::new(LossHistoryConfig::default());
        for s in [0, 1, 2, 5, 6, 7, 8, 9] {
            h.on_packet(Arrival::new(s, ms(s)), ms(50), || 100.0);
        }
        assert_eq!(h.lost_packets(), 2);
        assert_eq!(h.loss_events(), 1);
    }

    #[test]
    fn ecn_mark_is_a_loss_event() {
        let mut h = LossHistory::new(LossHistoryConfig::default());
        for s in 0..20 {
            let mut a = Arrival::new(s, ms(s));
            a.ecn_ce = s == 10;
            let o = h.on_packet(a, ms(5), || 40.0);
            assert_eq!(o.new_loss_events, (s == 10) as u32);
        }
        assert_eq!(h.marked_packets(), 1);
        assert_eq!(h.lost_packets(), 0);
        // I_1 = 40 (synthetic), I_0 = 10..=19 = 10 → p = 1/40.
        assert!((h.loss_event_rate() - 1.0 / 40.0).abs() < 1e-12);
    }

    #[test]
    fn first_interval_closure_called_once() {
        let mut h = LossHistory::new(LossHistoryConfig::default());
        let mut calls = 0;
        for s in 0..400u64 {
            if s % 100 == 50 {
                continue;
            }
            h.on_packet(Arrival::new(s, ms(s)), ms(10), || {
                calls += 1;
                250.0
            });
        }
        assert_eq!(calls, 1);
        assert_eq!(
            h.closed_intervals().collect::<Vec<_>>(),
            vec![100.0, 100.0, 100.0, 250.0]
        );
    }

    #[test]
    fn window_counter_rule() {
        // CCVal advances one per 10 packets and wraps at 16: ccval(s) = (5 + s/10) mod 16.
        // Loss 100: the packet before, 99, has ccval 14 (event start). Loss 140: 139 has
        // (5 + 13) mod 16 = 2, (2 − 14) mod 16 = 4 ahead: same event. Loss 150: 149 has 3, 5
        // ahead: a new event, I_1 = 150 − 100.
        let cfg = LossHistoryConfig {
            rule: LossEventRule::WindowCounter,
            ..LossHistoryConfig::default()
        };
        let mut h = LossHistory::new(cfg);
        for s in 0..200u64 {
            if [100, 140, 150].contains(&s) {
                continue;
            }
            let a = Arrival::new(s, ms(s)).with_ccval(((5 + s / 10) % 16) as u8);
            h.on_packet(a, SimTime::ZERO, || 300.0);
        }
        assert_eq!(h.lost_packets(), 3);
        assert_eq!(h.loss_events(), 2);
        assert_eq!(h.closed_intervals().next(), Some(50.0));
    }

    #[test]
    fn ns2_averaging_after_first_loss() {
        // ns-2 averaging right after the first loss: I_1 = 600 (synthetic), I_0 grows from 1.
        let mut h = LossHistory::new(LossHistoryConfig::ns2());
        for s in 0..120u64 {
            if s == 59 {
                continue;
            }
            let a = Arrival::new(s, ms(s)).with_ccval(0);
            h.on_packet(a, ms(10), || 600.0);
        }
        // I_0 = 59..=119 = 61; I_mean = (61 + 600)/6 = 110.17.
        assert!((h.mean_interval().unwrap() - 661.0 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn history_discounting_lowers_p_after_a_long_loss_free_period() {
        let cfg = LossHistoryConfig {
            discounting: true,
            ..LossHistoryConfig::default()
        };
        let mut with = LossHistory::new(cfg);
        let mut without = LossHistory::new(LossHistoryConfig::default());
        // Ten losses every 20 packets, then 1000 loss-free packets.
        let lost = |s: u64| s < 200 && s % 20 == 19;
        run(&mut with, 1200, ms(5), lost, 20.0);
        run(&mut without, 1200, ms(5), lost, 20.0);
        // Losses at 19, 39, …, 199. Without: closed intervals all 20, I_0 = 199..=1199 = 1001 →
        // I_tot0 = 1001 + 20·(1+1+1+0.8+0.6+0.4+0.2) = 1101, I_mean = 1101/6 = 183.5. With:
        // I_0 > 2·20, DF = max(2·20/1001, 0.5) = 0.5 halves the closed intervals' weights in
        // I_tot0: (1001 + 0.5·20·5)/(1 + 0.5·5) = 1051/3.5 = 300.3.
        assert!((without.mean_interval().unwrap() - 1101.0 / 6.0).abs() < 1e-9);
        assert!((with.mean_interval().unwrap() - 1051.0 / 3.5).abs() < 1e-9);
        assert!(with.loss_event_rate() < without.loss_event_rate());
    }

    #[test]
    fn receive_rate_windows() {
        // 100-byte packets every 10 ms from 0 to 1000 ms, a 2 s silence, then 3 packets at
        // 3000, 3010, 3020 ms. RTT 100 ms; feedback last sent at 1000 ms.
        let rtt = ms(100);
        let mut last = ReceiveRate::new(XRecvWindow::LastRtt);
        let mut since = ReceiveRate::new(XRecvWindow::SinceLastFeedback);
        for t in (0..=1000).step_by(10) {
            last.on_data(ms(t), 100, rtt);
            since.on_data(ms(t), 100, rtt);
        }
        // In the last RTT [900, 1000]: 11 packets = 1100 B / 0.1 s = 11000 B/s. Since the first
        // packet (no feedback yet): 101 packets = 10100 B over 1 s.
        assert!((last.x_recv(ms(1000), rtt) - 11_000.0).abs() < 1e-6);
        assert!((since.x_recv(ms(1000), rtt) - 10_100.0).abs() < 1e-6);
        since.on_feedback_sent(ms(1000));
        for t in [3000, 3010, 3020] {
            last.on_data(ms(t), 100, rtt);
            since.on_data(ms(t), 100, rtt);
        }
        // Last RTT: 300 B / 0.1 s = 3000 B/s. Since feedback: 300 B / 2.02 s = 148.5 B/s.
        assert!((last.x_recv(ms(3020), rtt) - 3000.0).abs() < 1e-6);
        assert!((since.x_recv(ms(3020), rtt) - 300.0 / 2.02).abs() < 1e-6);
        assert_eq!(since.bytes_since_feedback(), 300);
    }
}
