//! TCP sender: segmentation, window-limited transmission, loss detection and recovery, RTO.
//!
//! Loss recovery (chosen per flow, [`Recovery`]):
//! - SACK: RFC 6675. Scoreboard of SACKed/lost/retransmitted segments; IsLost = DupThresh SACKed
//!   segments above; SetPipe = outstanding − SACKed − lost + retransmitted; lost segments go
//!   before new data while pipe < cwnd (NextSeg rule 1, rule 2).
//!
//! How cwnd comes down in fast recovery is [`CwndReduction`]: PRR (RFC 6937, Linux; default)
//! sets cwnd = pipe + sndcnt on every ACK of the recovery, which also makes the first
//! retransmission go; rate halving (ns-2.35 TCP-Linux) sets cwnd = ssthresh and lets one segment
//! go per two delivered until the pipe has come down to it; "at-once" sets cwnd = ssthresh and
//! retransmits the first lost segment regardless of the window (RFC 6675 §5 step 4.1). Every
//! mode ends the recovery at cwnd = ssthresh (Linux `tcp_end_cwnd_reduction`).
//! - NewReno: RFC 6582 without SACK. As Linux does for non-SACK peers, each duplicate ACK counts as
//!   one segment that left the network (`reno_sacked`, Linux `tcp_add_reno_sack`), which is
//!   equivalent to RFC 5681's window inflation; a partial ACK retransmits the next hole at once and
//!   restarts the RTO timer only if it is the first partial ACK of the episode (RFC 6582 §3.2
//!   step 5, the "Impatient" variant of §4, so a window with many losses falls back to a timeout
//!   instead of repairing one loss per RTT); recovery ends when `recover` is acknowledged.
//!   A new fast retransmit only starts when the ACK covers more than `recover` (§3.2 step 2).
//!
//! RACK-TLP (RFC 8985, [`super::rack`]; `cfg.rack`, `cfg.tlp`, SACK only, default on as Linux):
//! - RACK replaces RFC 6675's IsLost and DupAcks rules: on an ACK that is not a clean advance
//!   in the Open state (Linux `tcp_fastretrans_alert` -> `tcp_identify_packet_loss`), segments
//!   sent before the most recently sent delivered one are marked lost once RACK.rtt + reo_wnd
//!   has passed since they were sent; the rest arm the reordering timer. Recovery starts when
//!   something is marked lost (Linux `tcp_time_to_recover` with RACK: `lost_out != 0`), so a
//!   single SACKed segment above a hole starts it after min_rtt/4, and dupthresh SACKed
//!   segments at once (reo_wnd = 0 until reordering is seen, `tcp_rack_reo_wnd`). Entering
//!   recovery no longer marks snd_una lost by definition; the first lost segment is sent.
//!   RACK also finds lost retransmissions, so `lost_retransmit` acts only with RACK off.
//! - TLP: in Open/CWR with data out, the timer slot holds the probe timeout (Linux
//!   `tcp_schedule_loss_probe`, after each advancing ACK and each send of new data) instead of
//!   the RTO; when it fires, one new segment (the receive window allowing) or the last one
//!   again goes out regardless of cwnd, then the RTO is armed. An ACK beyond the probe's
//!   snd_nxt after a retransmitted probe means the probe repaired a loss: one cwnd reduction
//!   (CWR, Linux `tcp_process_tlp_ack`).
//! - The probe and reordering timers share the RTO's slot (`rto_deadline`, with `timer` saying
//!   which it is), as Linux's `icsk_pending` does: `next_timer` is unchanged and exact.
//!
//! RTO: Linux's estimator or RFC 6298's (see [`super::rtt`]); on expiry ssthresh is reduced (unless already in
//! Recovery/Loss, as Linux `tcp_enter_loss`), cwnd = 1 (RFC 5681 LW), every unSACKed segment is
//! marked lost and retransmitted in slow start; the RTO backs off until a new RTT sample.
//!
//! RTT: every ACK that advances the cumulative point gives a sample from its timestamp echo
//! (RFC 7323 §4.3), so Karn's ambiguity does not arise.
//!
//! Rate-based algorithms (`CongestionOps::has_cong_control`, e.g. BBR), as Linux
//! `tcp_cong_control` treats an algorithm with `.cong_control` (read in v6.17-rc tcp_input.c).
//! What changes when it is true (cached in `cong_control` at construction; nothing of it runs
//! for other algorithms):
//! - Delivery-rate sampling ([`super::rate`], Linux tcp_rate.c): every (re)transmission
//!   snapshots the delivery state in the scoreboard; every ACK builds a [`RateSample`] after loss
//!   detection and the state changes (Linux: `tcp_rate_gen` after `tcp_fastretrans_alert`) and
//!   hands it to `cong_control`, which replaces `cong_avoid` in every state. Running out of new
//!   data with room in the window marks the connection application-limited.
//! - The sender no longer sets cwnd in recovery: entering fast recovery it asks `ssthresh` (which
//!   BBR uses to save its cwnd) and stores the result, but leaves cwnd alone (Linux: no PRR
//!   `tcp_cwnd_reduction` for such algorithms), and at the end of recovery it neither sets
//!   cwnd = ssthresh nor raises `CompleteCwr` (Linux `tcp_end_cwnd_reduction` returns early).
//!   The algorithm reduces and restores cwnd itself (BBR: packet conservation in the first round
//!   of recovery, restore of the saved cwnd on exit). A timeout still sets cwnd = 1 and calls
//!   `ssthresh`, `CaEvent::Loss` and `set_state(Loss)` as for every algorithm (Linux
//!   `tcp_enter_loss` does so for BBR too).
//! - Pacing is always on (`cfg.pacing` is forced true at construction): Linux's BBR sets
//!   `sk_pacing_status = SK_PACING_NEEDED`, so TCP paces internally even without the fq qdisc.
//!   A rate the algorithm sets in `tp.pacing_rate_bps` spaces segments by their payload (Linux
//!   `tcp_update_skb_after_send` uses `skb->len`); the sender's own fallback rate (no algorithm
//!   rate) spaces wire bytes as before.
//! - Not done: with `recovery = newreno` a duplicate ACK does not count as a delivery here (Linux
//!   `tcp_add_reno_sack` counts it, and `tcp_remove_reno_sacks` the rest), so during NewReno
//!   recovery rate samples see nothing delivered and BBR's packet conservation cannot release
//!   packets; counting them would change `pkts_acked` for the window-based algorithms. Use SACK
//!   (the default) with rate-based algorithms; measured: one BBR flow per pair on
//!   `dumbbell-reno.toml` gets 93 Mb/s with SACK, 36 Mb/s and 102 timeouts with NewReno.
//!
//! Flow control (only for a sender built [`TcpSender::with_peer_window`], whose receiver has a
//! finite buffer its application drains: relay depots): new data also stops at the window's
//! right edge the ACKs advertise, and the persist timer probes a closed window
//! ([`super::flow_control`]). Its checks sit behind one `Option` test, so other senders pay a
//! branch. A relay's onward sender is fed by its application over time
//! ([`TcpSender::supplied`], [`TcpSender::write_bytes`]).

use super::config::{
    CwndGrowth, CwndReduction, IdleRestart, LossState, Recovery, RtoRestart, RtoSsthresh,
    RttSamples, TcpConfig,
};
use super::flow_control::SendWindow;
use super::rack::{REARM_MIN, TIMEOUT_MIN};
use super::rate::RateEstimator;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::window_mean::WindowArea;
use crate::cc::{AckSample, CaEvent, CaState, CongestionOps, RateSample, TcpState};
use fatpipe_core::{RngStream, SimTime};
use fatpipe_net::{Flags, Packet, PacketKind, SackBlocks};

/// Counters a sender keeps.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub data_packets_sent: u64,
    pub payload_bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Window reductions for ECN-Echo (RFC 3168).
    pub ecn_reductions: u64,
    /// Set when the last segment of a finite transfer was cumulatively acknowledged.
    pub acked_all_at: Option<SimTime>,
    /// The receiver window limited transmission at least once.
    pub rwnd_limited: bool,
    /// Tail loss probes sent (TLP; the retransmitted ones also count in `retransmits`).
    pub loss_probes: u64,
    /// Zero-window probes sent by the persist timer (flow control only).
    pub window_probes: u64,
}

/// `rack_tlp_on_ack` result: RACK has marked a segment lost (start recovery).
const RT_LOST: u8 = 1;
/// `rack_tlp_on_ack` result: TLP is on; see to the probe timer after sending.
const RT_TLP: u8 = 2;
/// `rack_tlp_on_ack` result: the ACK advanced snd_una and RACK armed no timer (Linux
/// `FLAG_SET_XMIT_TIMER` survives): the probe may take the slot.
const RT_ADVANCING: u8 = 4;
/// `rack_tlp_on_ack` result: the ACK advanced snd_una.
const RT_ADVANCED: u8 = 8;

/// What the deadline in the timer slot is (Linux `icsk_pending`: the RTO, RACK's reordering
/// timer and TLP's probe timer share one slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XmitTimer {
    Rto,
    Reo,
    Probe,
    /// The persist timer (flow control: the receiver's window is closed, nothing is out).
    Persist,
}

/// What the application of a relay's onward sender has written so far.
#[derive(Clone, Copy, Debug)]
struct Supply {
    written: u64,
    /// The whole transfer (None: it never ends).
    total: Option<u64>,
}

pub struct TcpSender {
    pub flow: u32,
    /// Node of the receiver (destination of data packets).
    pub peer: u32,
    cfg: TcpConfig,
    pub tp: TcpState,
    pub cc: Box<dyn CongestionOps>,
    sb: Scoreboard,
    pub rtt: RttEstimator,
    /// Total segments of a finite transfer (None = bulk).
    total_segments: Option<u64>,
    total_bytes: Option<u64>,
    /// No new data after this (bulk flows with a stop time).
    stopped: bool,
    started: bool,
    /// Duplicate ACKs in a row.
    dupacks: u32,
    /// NewReno: duplicate ACKs counted as segments that left the network.
    reno_sacked: u32,
    /// End of the current recovery episode (RFC 6582 `recover`; Linux `high_seq`), in segments.
    recovery_point: u64,
    /// Highest segment sent when the last fast retransmit or timeout started (RFC 6582
    /// `recover`, the step 2 guard).
    recover_guard: u64,
    /// The timer slot's deadline; `timer` says whether it is the RTO, the reordering or the probe
    /// timer (always the RTO without RACK-TLP).
    rto_deadline: Option<SimTime>,
    timer: XmitTimer,
    /// RACK (RFC 8985 §6) and TLP (§7) in force: configured and SACK recovery; `rack_tlp` is
    /// either (the one flag the ACK path tests, so Reno without them pays a few branches).
    rack: bool,
    tlp: bool,
    rack_tlp: bool,
    /// New segments carry more than a flag (rate snapshot or transmission stamp).
    rich_send: bool,
    /// DupThresh of RFC 6675's rules (DupAcks, IsLost): `cfg.dupthresh`, or never (u32::MAX)
    /// when RACK replaces them, so the SACK path needs no extra test for RACK.
    sack_dupthresh: u32,
    /// Linux 2.6-4.x lost-retransmission rule in force (`cfg.lost_retransmit`, RACK off).
    lost_retransmit: bool,
    /// ACKs may take the fast path (`on_plain_ack`): no RACK-TLP, rate sampling or ECN.
    plain_acks: bool,
    /// TLP: snd_nxt when the outstanding probe was sent (Linux `tlp_high_seq`), and whether it
    /// was a retransmission (`tlp_retrans`).
    tlp_high: Option<u64>,
    tlp_retrans: bool,
    /// A loss probe of new data is being sent (it schedules no further probe).
    probing: bool,
    /// TLP: new data went out since the probe timer was last seen to.
    sent_new: bool,
    /// NewReno: partial ACKs seen in the current recovery episode (Impatient timer rule).
    partial_acks: u32,
    /// NewReno: this ACK must not restart the RTO timer (a later partial ACK, RFC 6582 §4).
    hold_rto: bool,
    pacing_next: SimTime,
    pacing_timer: Option<SimTime>,
    /// Send jitter (ns-2 `overhead_`): the time the pending delayed send may go, and its stream.
    jitter_at: Option<SimTime>,
    /// The delayed send is being made: everything the window allows goes (until transmit ends).
    jitter_open: bool,
    jitter_rng: RngStream,
    rwnd_segments: u64,
    /// SACK blocks of the previous ACK as segment ranges, to process only newly covered ranges.
    prev_sack: [(u64, u64); SackBlocks::MAX],
    prev_sack_n: usize,
    /// The algorithm has `cong_control` (rate samples, no sender cwnd reduction, pacing).
    cong_control: bool,
    /// The algorithm has a `pkts_acked` hook (`CongestionOps::has_pkts_acked`).
    pkts_acked_hook: bool,
    /// Delivery-rate estimator (used only when `cong_control`).
    rate: RateEstimator,
    /// PRR (RFC 6937): segments delivered since the recovery began, and the sender's packet count
    /// when it began (prr_out, what was sent since, is the difference: every send in between is a
    /// Recovery send, as Linux counts them in tcp_event_data_sent / tcp_retransmit_skb).
    prr_delivered: u32,
    prr_sent_base: u64,
    /// Rate halving (ns-2.35 `next_pkts_in_flight_`): a second bound on the pipe, above cwnd,
    /// that falls by one for every two segments delivered; 0 when not halving.
    rh_limit: u32,
    /// ECN: no new reduction for ECE until an ACK passes this (snd_nxt at the last reduction).
    ecn_cwr_until: u64,
    /// ECN: the next new segment carries CWR.
    ecn_send_cwr: bool,
    /// The window ns-2's agent gives the module on entering recovery (`snd_cwnd`): the module's
    /// `min_cwnd` where it has one, else ssthresh. The pipe is bounded by the larger of it and
    /// `rh_limit`.
    rh_floor: u32,
    /// Incarnation of the connection slot, stamped on every packet (see `Packet::epoch`).
    epoch: u16,
    /// Time of the last data transmission (Linux `lsndtime`), for the restart after idle of a
    /// streaming sender.
    last_send: SimTime,
    /// The application writes segments over time; the transfer is never "done".
    streaming: bool,
    /// New data passes a gate before it goes: the send jitter or the receiver's window (one flag
    /// on the transmit path for both, see `new_data_gate`).
    gated: bool,
    /// The receiver's advertised window, when it has a finite buffer (flow control).
    window: Option<Box<SendWindow>>,
    /// Bytes the application has written, when it writes over time (relay depots).
    supply: Option<Supply>,
    /// Time-averaged window, for connections that asked for it (web and file objects).
    window_area: Option<WindowArea>,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(
        flow: u32,
        peer: u32,
        cfg: TcpConfig,
        mut cc: Box<dyn CongestionOps>,
        total_bytes: Option<u64>,
    ) -> Self {
        let mut cfg = cfg;
        let mut tp = TcpState::new(cfg.mss, cfg.initial_window.max(1), cfg.initial_ssthresh);
        cc.init(&mut tp);
        let cong_control = cc.has_cong_control();
        let pkts_acked_hook = cc.has_pkts_acked();
        let mut sb = Scoreboard::new();
        let sack = cfg.recovery == Recovery::Sack;
        let (rack, tlp) = (cfg.rack && sack, cfg.tlp && sack);
        if rack || tlp {
            sb.track_xmit();
        }
        if cong_control {
            sb.track_rate();
            // Rate-based algorithms pace (Linux SK_PACING_NEEDED); see the module doc.
            cfg.pacing = true;
        }
        let mss = cfg.mss as u64;
        let sack_dupthresh = if rack { u32::MAX } else { cfg.dupthresh };
        let lost_retransmit = cfg.lost_retransmit && !rack;
        let plain_acks = !(rack || tlp || cong_control || cfg.ecn);
        let gated = cfg.send_jitter != SimTime::ZERO;
        TcpSender {
            flow,
            peer,
            rtt: RttEstimator::new(cfg.rto_estimator, cfg.min_rto, cfg.max_rto, cfg.initial_rto),
            total_segments: total_bytes.map(|b| b.div_ceil(mss)),
            total_bytes,
            rwnd_segments: (cfg.rwnd_bytes / mss).max(1),
            cfg,
            tp,
            cc,
            sb,
            stopped: false,
            started: false,
            dupacks: 0,
            reno_sacked: 0,
            recovery_point: 0,
            recover_guard: 0,
            rto_deadline: None,
            timer: XmitTimer::Rto,
            rack,
            tlp,
            rack_tlp: rack || tlp,
            rich_send: cong_control || rack || tlp,
            sack_dupthresh,
            lost_retransmit,
            plain_acks,
            tlp_high: None,
            tlp_retrans: false,
            probing: false,
            sent_new: false,
            partial_acks: 0,
            hold_rto: false,
            pacing_next: SimTime::ZERO,
            pacing_timer: None,
            jitter_at: None,
            jitter_open: false,
            jitter_rng: RngStream::new(0, &format!("flow/{flow}/send_jitter")),
            prev_sack: [(0, 0); SackBlocks::MAX],
            prev_sack_n: 0,
            cong_control,
            pkts_acked_hook,
            rate: RateEstimator::new(),
            prr_delivered: 0,
            prr_sent_base: 0,
            rh_limit: 0,
            ecn_cwr_until: 0,
            ecn_send_cwr: false,
            rh_floor: 0,
            epoch: 0,
            last_send: SimTime::ZERO,
            streaming: false,
            gated,
            window_area: None,
            window: None,
            supply: None,
            stats: SenderStats::default(),
        }
    }

    /// Keep the time-averaged window from `start` on ([`TcpSender::window_mean`]).
    pub fn with_window_mean(mut self, start: SimTime) -> Self {
        self.window_area = Some(WindowArea::new(start));
        self
    }

    /// Mean cwnd (packets) from the start given to [`TcpSender::with_window_mean`] until `now`
    /// (None when not kept).
    pub fn window_mean(&self, now: SimTime) -> Option<f64> {
        self.window_area.map(|w| w.mean(now, self.tp.snd_cwnd))
    }

    /// The window held until `now` (before an event may change it).
    #[inline]
    fn note_window(&mut self, now: SimTime) {
        if let Some(w) = &mut self.window_area {
            w.advance(now, self.tp.snd_cwnd);
        }
    }

    /// Make this a streaming sender: the application writes whole segments over time
    /// ([`TcpSender::write_segments`]) instead of having a bulk or file source. Voice over TCP
    /// sends each voice packet as one segment, as ns-2 does with `packetSize_` set to it.
    pub fn streaming(mut self) -> Self {
        self.total_segments = Some(0);
        self.total_bytes = Some(0);
        self.streaming = true;
        self
    }

    /// A streaming sender's application writes `n` more segments at `now`.
    ///
    /// Restart after idle (RFC 2861 §3 / RFC 5681 §4.1, Linux `tcp_cwnd_restart` with
    /// `tcp_slow_start_after_idle` = 1): when nothing is in flight and nothing was sent for an
    /// RTO, ssthresh keeps 3/4 of cwnd, cwnd halves for each RTO idle, not below
    /// min(initial window, cwnd), and the algorithm hears `CA_EVENT_CWND_RESTART`; a first
    /// transmission with nothing in flight is `CA_EVENT_TX_START`. With `IdleRestart::
    /// InitialWindow` (ns-2's `slow_start_restart_`) cwnd returns to the initial window instead,
    /// ssthresh untouched.
    pub fn write_segments(&mut self, n: u64, now: SimTime, out: &mut Vec<Packet>) {
        let mss = self.cfg.mss as u64;
        let total = self.total_segments.unwrap_or(0) + n;
        self.total_segments = Some(total);
        self.total_bytes = Some(total * mss);
        self.resume_writing(now, out);
    }

    /// Make this the onward sender of a relay: its application writes bytes over time
    /// ([`TcpSender::write_bytes`]), `total` in all (None: without end). Whole segments go as
    /// soon as they are written; a short last segment only when the total is complete.
    pub fn supplied(mut self, total: Option<u64>) -> Self {
        self.total_segments = Some(0);
        self.total_bytes = Some(0);
        self.streaming = true;
        self.supply = Some(Supply { written: 0, total });
        self
    }

    /// Bytes the application of a [`TcpSender::supplied`] sender has written (0 otherwise).
    pub fn written(&self) -> u64 {
        self.supply.map_or(0, |s| s.written)
    }

    /// The application of a [`TcpSender::supplied`] sender writes `n` more bytes at `now`; the
    /// window restarts after idle as for [`TcpSender::write_segments`].
    pub fn write_bytes(&mut self, n: u64, now: SimTime, out: &mut Vec<Packet>) {
        let mss = self.cfg.mss as u64;
        let s = self
            .supply
            .as_mut()
            .expect("write_bytes needs a supplied sender");
        s.written += n;
        let (segments, bytes) = match s.total {
            Some(t) if s.written >= t => {
                // Complete: the transfer is finite again (done once all is acknowledged).
                self.streaming = false;
                (t.div_ceil(mss), t)
            }
            _ => {
                let k = s.written / mss;
                (k, k * mss)
            }
        };
        let before = self.total_segments.unwrap_or(0);
        self.total_segments = Some(segments);
        self.total_bytes = Some(bytes);
        if segments > before {
            self.resume_writing(now, out);
        }
    }

    /// After the application wrote more: restart the window after idle, then send.
    fn resume_writing(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.started || self.stopped {
            return;
        }
        // The last ACK (or send) this sender handled: ns-2's retransmission timer, which makes
        // its restart, runs from the last ACK.
        let last_event = self.tp.now;
        self.note_window(now);
        self.tp.now = now;
        if self.sb.outstanding() == 0 {
            if self.cfg.restart_after_idle && self.stats.data_packets_sent > 0 {
                let rto = self.rtt.rto().as_nanos().max(1);
                let mut idle = now.saturating_sub(self.last_send).as_nanos();
                let since_ack = now.saturating_sub(last_event).as_nanos();
                if self.cfg.idle_restart == IdleRestart::InitialWindow {
                    if since_ack > rto {
                        self.tp.snd_cwnd = self.cfg.initial_window.max(1);
                    }
                } else if idle > rto {
                    self.cc.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
                    let restart = self.cfg.initial_window.max(1).min(self.tp.snd_cwnd);
                    self.tp.snd_ssthresh = self.tp.snd_ssthresh.max(self.tp.snd_cwnd / 4 * 3);
                    let mut cwnd = self.tp.snd_cwnd;
                    while idle > rto && cwnd > restart {
                        idle -= rto;
                        cwnd >>= 1;
                    }
                    self.tp.snd_cwnd = cwnd.max(restart);
                }
            }
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        self.transmit(now, out);
    }

    /// The receiver has a finite buffer of `peer_buffer` bytes that its application drains
    /// (flow control, [`super::flow_control`]): new data stops at the window its ACKs advertise.
    pub fn with_peer_window(mut self, peer_buffer: u64) -> Self {
        self.window = Some(Box::new(SendWindow::new(peer_buffer)));
        self.gated = true;
        self
    }

    /// The right edge of the window the receiver advertised (flow control only).
    pub fn peer_window_edge(&self) -> Option<u64> {
        self.window.as_ref().map(|w| w.edge())
    }

    /// Stamp this connection's packets with slot incarnation `epoch` (see `Packet::epoch`).
    pub fn with_epoch(mut self, epoch: u16) -> Self {
        self.epoch = epoch;
        self
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// Draw the send jitter from the scenario seed's stream for this flow (component id
    /// `flow/<id>/send_jitter`), so it is independent of every other random choice.
    pub fn with_seed(mut self, seed: u64, plan_flow: u32) -> Self {
        self.jitter_rng = RngStream::new(seed, &format!("flow/{plan_flow}/send_jitter"));
        self
    }

    /// Draw the send jitter from `stream` (web objects use one stream per object).
    pub fn with_jitter_stream(mut self, stream: RngStream) -> Self {
        self.jitter_rng = stream;
        self
    }

    /// Segments in flight as the window rules see them.
    #[inline]
    pub fn pipe(&self) -> u32 {
        self.sb.pipe().saturating_sub(self.reno_sacked)
    }

    /// Cumulatively acknowledged payload bytes.
    pub fn bytes_acked(&self) -> u64 {
        let b = self.sb.una() * self.cfg.mss as u64;
        self.total_bytes.map_or(b, |t| b.min(t))
    }

    /// RACK has seen reordering (Linux `tp->reord_seen`).
    pub fn reordering_seen(&self) -> bool {
        self.sb.reord_seen
    }

    pub fn is_done(&self) -> bool {
        !self.streaming && self.total_segments.is_some_and(|t| self.sb.una() >= t)
    }

    /// Whether the application has started sending (`start`).
    #[inline]
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// The application starts sending.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.started = true;
        self.tp.now = now;
        self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        self.transmit(now, out);
    }

    /// The application stops offering new data (retransmissions continue).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The earliest of the RTO, pacing and send-jitter deadlines (read for every ACK the engine
    /// considers handing over ahead of the clock, so kept branch-light).
    #[inline]
    pub fn next_timer(&self) -> Option<SimTime> {
        if self.pacing_timer.is_none() && self.jitter_at.is_none() {
            return self.rto_deadline; // the common case: neither pacing nor jitter pending
        }
        let t = self
            .rto_deadline
            .unwrap_or(SimTime::MAX)
            .min(self.pacing_timer.unwrap_or(SimTime::MAX))
            .min(self.jitter_at.unwrap_or(SimTime::MAX));
        (t != SimTime::MAX).then_some(t)
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.note_window(now);
        self.tp.now = now;
        let mut probed = false;
        if self.rto_deadline.is_some_and(|d| d <= now) {
            match self.timer {
                XmitTimer::Rto => self.on_rto(now),
                XmitTimer::Reo => self.rack_reo_timeout(now, out),
                XmitTimer::Probe => {
                    self.send_loss_probe(now, out);
                    probed = true;
                }
                XmitTimer::Persist => self.on_persist(now, out),
            }
        }
        if self.pacing_timer.is_some_and(|d| d <= now) {
            self.pacing_timer = None;
        }
        self.transmit_halving(now, out);
        // New data sent from a timer (pacing, jitter) schedules the probe as any send does; not
        // right after a probe (Linux sends it alone, with push_one = 2, scheduling nothing).
        if self.tlp {
            if probed {
                self.sent_new = false;
            } else {
                self.tlp_after_send(now, false, false);
            }
        }
        // A delayed send whose time came while the window was closed is void (ns-2's delsnd
        // timer has fired either way); the next chance to send draws a fresh delay. Leaving it
        // in the past would make it a timer due at once, for ever.
        if self.jitter_at.is_some_and(|t| t <= now) {
            self.jitter_at = None;
        }
    }

    #[inline]
    fn seg_len(&self, seg: u64) -> u32 {
        let mss = self.cfg.mss as u64;
        match self.total_bytes {
            Some(t) => (t - seg * mss).min(mss) as u32,
            None => mss as u32,
        }
    }

    /// Segment number of a byte offset that ends a range (rounds up: a partial last segment counts).
    #[inline]
    fn seg_ceil(&self, byte: u64) -> u64 {
        let s = byte.div_ceil(self.cfg.mss as u64);
        self.total_segments.map_or(s, |t| s.min(t))
    }

    #[inline(always)]
    fn send_segment(&mut self, seg: u64, retransmit: bool, now: SimTime, out: &mut Vec<Packet>) {
        let len = self.seg_len(seg);
        let size = self.cfg.wire_size(len);
        out.push(Packet {
            flow: self.flow,
            dst: self.peer,
            size,
            kind: PacketKind::Data,
            seq: seg * self.cfg.mss as u64,
            len,
            ts: now.as_nanos() + 1,
            sack: SackBlocks::default(),
            flags: self.data_flags(retransmit),
            epoch: self.epoch,
        });
        self.stats.data_packets_sent += 1;
        self.last_send = now;
        self.stats.payload_bytes_sent += len as u64;
        if retransmit {
            self.stats.retransmits += 1;
        }
        if self.rto_deadline.is_none()
            || (retransmit
                && seg == self.sb.una()
                && !self.hold_rto
                && self.timer != XmitTimer::Reo)
        {
            // RFC 6298 (5.1); retransmitting the head restarts the timer, as Linux
            // (tcp_xmit_retransmit_queue) and ns-2 (reset_rtx_timer on fast retransmit) do, so a
            // recovery that started late in the timer's life is not cut short by a timeout.
            // Linux leaves a pending reordering timer alone there.
            self.rto_deadline = Some(now + self.rtt.rto());
            self.timer = XmitTimer::Rto;
        }
        if self.cfg.pacing {
            // An algorithm's rate paces payload (Linux internal pacing), the fallback wire bytes.
            let (rate, bytes) = if self.tp.pacing_rate_bps > 0 {
                (self.tp.pacing_rate_bps, len)
            } else {
                (self.pacing_rate_bps(), size)
            };
            if rate > 0 {
                let gap = (bytes as u128 * 8 * 1_000_000_000 / rate as u128) as u64;
                self.pacing_next = now.max(self.pacing_next) + SimTime(gap);
            }
        }
    }

    /// Pacing rate: set by the algorithm, else Linux's default of 2·cwnd/srtt in slow start and
    /// 1.2·cwnd/srtt in congestion avoidance (sysctl tcp_pacing_ss_ratio = 200, ca_ratio = 120).
    fn pacing_rate_bps(&self) -> u64 {
        if self.tp.pacing_rate_bps > 0 {
            return self.tp.pacing_rate_bps;
        }
        let Some(srtt) = self.rtt.srtt() else {
            return 0;
        };
        let ratio = if self.tp.in_slow_start() { 2.0 } else { 1.2 };
        let bits = self.tp.snd_cwnd as f64 * (self.cfg.mss + self.cfg.header_bytes) as f64 * 8.0;
        (ratio * bits / srtt.as_secs_f64().max(1e-9)) as u64
    }

    fn has_new_data(&self) -> bool {
        if !self.started || self.stopped {
            return false;
        }
        self.total_segments.map_or(true, |t| self.sb.nxt() < t)
    }

    /// Send what the window allows: lost segments first (RFC 6675 NextSeg rule 1), then new data.
    #[inline(always)]
    fn transmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.transmit_as::<false>(now, out);
    }

    /// [`TcpSender::transmit`] from a clean state (the fast path, `plain_state`): nothing is
    /// SACKed, lost or retransmitted and no duplicate ACK is counted, so the pipe is the
    /// outstanding count, and sending new data keeps it so.
    #[inline(always)]
    fn transmit_clean(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.transmit_as::<true>(now, out);
    }

    /// The pipe, known to be the outstanding count when `CLEAN`.
    #[inline(always)]
    fn pipe_as<const CLEAN: bool>(&self) -> u32 {
        if CLEAN {
            self.sb.outstanding()
        } else {
            self.pipe()
        }
    }

    #[inline(always)]
    fn transmit_as<const CLEAN: bool>(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        debug_assert!(!CLEAN || (self.sb.is_clean() && self.reno_sacked == 0));
        loop {
            if self.cfg.pacing && now < self.pacing_next {
                if self.pacing_timer.is_none() {
                    self.pacing_timer = Some(self.pacing_next);
                }
                break;
            }
            let pipe = self.pipe_as::<CLEAN>();
            if pipe >= self.tp.snd_cwnd {
                self.tp.is_cwnd_limited = true;
                break;
            }
            if let Some(seg) = self.sb.next_lost() {
                if !self.jitter_allows(now) {
                    break;
                }
                self.retransmit(seg, now, out);
                continue;
            }
            if !self.has_new_data() {
                self.tp.is_cwnd_limited = false;
                if self.cong_control {
                    self.check_app_limited();
                }
                break;
            }
            if self.sb.outstanding() as u64 >= self.rwnd_segments {
                self.tp.is_cwnd_limited = false;
                self.stats.rwnd_limited = true;
                break;
            }
            if self.gated && !self.new_data_gate(now) {
                break;
            }
            self.send_new(now, out);
        }
        self.jitter_open = false;
        self.tp.packets_in_flight = self.pipe_as::<CLEAN>();
        self.tp.snd_nxt = self.sb.nxt();
        self.tp.lost = self.sb.lost_total;
    }

    /// Rate halving before a transmission (ns-2.35 `send_much`): the bound may exceed the pipe by
    /// one, and cwnd is the larger of the floor and the bound (what ns-2 shows as `cwnd_`).
    #[inline(never)]
    fn halve_before_send(&mut self) {
        self.rh_limit = self.rh_limit.min(self.pipe() + 1);
        self.tp.snd_cwnd = self.rh_floor.max(self.rh_limit).max(1);
    }

    /// Rate halving after a transmission that sent something: the bound falls to pipe − 1, so
    /// the next segment waits for two more to leave the network. One update after the loop
    /// equals ns-2's update after each send: the pipe only grows while sending, and the bound
    /// lets at most one segment past cwnd = ssthresh.
    #[inline(never)]
    fn halve_after_send(&mut self) {
        self.rh_limit = self.rh_limit.min(self.pipe().saturating_sub(1).max(1));
        self.tp.snd_cwnd = self.rh_floor.max(self.rh_limit).max(1);
    }

    /// ns-2.35 `LinuxTcpAgent::tcp_fastretrans_alert` on leaving Recovery or Loss: a cwnd below
    /// ssthresh is raised to it, then moderated to the pipe plus `tcp_max_burst` (3), as Linux
    /// 2.6.22's `tcp_moderate_cwnd`. After a cut to `min_cwnd` the window thus restarts from about
    /// the pipe, not from ssthresh.
    fn ns2_exit_moderation(&mut self) {
        const TCP_MAX_BURST: u32 = 3;
        if self.tp.snd_cwnd < self.tp.snd_ssthresh {
            self.tp.snd_cwnd = self.tp.snd_ssthresh.min(self.pipe() + TCP_MAX_BURST).max(1);
        }
    }

    /// Flags of a data segment: RFC 3168 §6.1.5 sends retransmissions not-ECT; the first new
    /// segment after a window reduction for ECE carries CWR (§6.1.2).
    #[inline]
    fn data_flags(&mut self, retransmit: bool) -> Flags {
        if retransmit {
            return Flags::new(Flags::RETRANSMIT);
        }
        if !self.cfg.ecn {
            return Flags::default();
        }
        let mut f = Flags::new(Flags::ECT);
        if std::mem::take(&mut self.ecn_send_cwr) {
            f.set(Flags::CWR);
        }
        f
    }

    /// RFC 3168 §6.1.2: an ACK with ECE halves the window as a loss would (the algorithm's
    /// ssthresh, cwnd = ssthresh at once; the state passes through CWR, as Linux's
    /// `tcp_enter_cwr`), at most once per window of data: not again until what was outstanding
    /// then is acknowledged, and not during a loss recovery, which has already reduced.
    fn on_ece(&mut self, ack: u64) {
        if ack <= self.ecn_cwr_until
            || !matches!(self.tp.ca_state, CaState::Open | CaState::Disorder)
        {
            return;
        }
        self.ecn_cwr_until = self.sb.nxt();
        self.ecn_send_cwr = true;
        self.stats.ecn_reductions += 1;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        let ssthresh = self.cc.ssthresh(&self.tp);
        let back = self.tp.ca_state;
        self.set_state(CaState::Cwr);
        self.tp.snd_ssthresh = ssthresh;
        self.tp.snd_cwnd_cnt = 0;
        if !self.cong_control {
            self.tp.snd_cwnd = ssthresh.max(1);
            self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
        }
        self.set_state(back);
    }

    /// Send under the rate-halving bound when one is active (timer-driven sends).
    fn transmit_halving(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let halving = self.rh_limit > 0 && self.tp.ca_state == CaState::Recovery;
        if halving {
            self.halve_before_send();
        }
        let sent_before = self.stats.data_packets_sent;
        self.transmit(now, out);
        if halving && self.stats.data_packets_sent > sent_before {
            self.halve_after_send();
        }
    }

    /// Send on an ACK during fast recovery, cwnd brought down as [`CwndReduction`] says (Linux
    /// tcp_cong_control: in a cwnd reduction, PRR instead of cong_avoid, on the ACK that entered
    /// recovery too).
    #[inline(never)]
    fn transmit_in_recovery(
        &mut self,
        delivered: u32,
        newly_lost: u64,
        una_advanced: bool,
        now: SimTime,
        out: &mut Vec<Packet>,
    ) {
        match self.cfg.cwnd_reduction {
            CwndReduction::Prr => {
                self.prr_reduce(delivered, newly_lost, una_advanced);
                self.transmit(now, out);
            }
            CwndReduction::RateHalving => self.transmit_halving(now, out),
            CwndReduction::AtOnce => self.transmit(now, out),
        }
    }

    /// PRR's per-ACK step (RFC 6937 §3.1 with the slow-start reduction bound, as Linux
    /// `tcp_cwnd_reduction`): `delivered` segments newly acked or SACKed by this ACK,
    /// `newly_lost` segments newly marked lost by it.
    fn prr_reduce(&mut self, delivered: u32, newly_lost: u64, una_advanced: bool) {
        if delivered == 0 || self.tp.prior_cwnd == 0 {
            return; // Linux: nothing delivered, nothing released
        }
        let pipe = self.pipe() as u64;
        let ssthresh = self.tp.snd_ssthresh as u64;
        self.prr_delivered += delivered;
        let prr_delivered = self.prr_delivered as u64;
        let prr_out = self.stats.data_packets_sent - self.prr_sent_base;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: ceil(prr_delivered · ssthresh / prior_cwnd) − prr_out.
            (prr_delivered * ssthresh)
                .div_ceil(self.tp.prior_cwnd as u64)
                .saturating_sub(prr_out)
        } else {
            // Slow-start reduction bound: grow back to ssthresh at most one segment faster than
            // deliveries, the extra one only when snd_una moved and nothing new was lost (Linux).
            let bonus = u64::from(una_advanced && newly_lost == 0);
            (prr_delivered.saturating_sub(prr_out).max(delivered as u64) + bonus)
                .min(ssthresh - pipe)
        };
        // The first segment of a recovery always goes (the fast retransmit).
        let sndcnt = if prr_out == 0 { sndcnt.max(1) } else { sndcnt };
        self.tp.snd_cwnd = (pipe + sndcnt).min(u32::MAX as u64) as u32;
    }

    /// Send the next new segment.
    #[inline(always)]
    fn send_new(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let seg = self.sb.nxt();
        if self.rich_send {
            self.push_new_rich(now);
        } else {
            self.sb.push_new();
        }
        self.send_segment(seg, false, now, out);
    }

    /// A new segment with its rate snapshot and/or RACK transmission stamp; with TLP, note
    /// that new data went out (the probe is rescheduled after the burst, `tlp_after_send`).
    #[inline(never)]
    fn push_new_rich(&mut self, now: SimTime) {
        let flags_pushed = self.cong_control;
        if self.cong_control {
            let rec = self.rate.on_send(&self.tp, self.sb.outstanding(), false);
            self.sb.push_new_tracked(rec);
        }
        if self.sb.timing() {
            self.sb.push_new_timed(now, flags_pushed);
        }
        if !self.probing {
            self.sent_new = true;
        }
    }

    /// Mark the connection application-limited if the window is not what stops it (rate
    /// sampling, Linux `tcp_rate_check_app_limited`).
    #[inline(never)]
    fn check_app_limited(&mut self) {
        let pipe = self.pipe();
        RateEstimator::check_app_limited(&mut self.tp, pipe, self.sb.lost_out, self.sb.retrans_out);
    }

    /// Build this ACK's delivery-rate sample and hand it to `cong_control` (Linux `tcp_ack`:
    /// `tcp_rate_gen` then `tcp_cong_control`).
    #[inline(never)]
    fn rate_control(&mut self, delivered: u32, prior_in_flight: u32, prior_lost: u64) {
        self.tp.packets_in_flight = self.pipe();
        self.tp.lost = self.sb.lost_total;
        self.tp.snd_nxt = self.sb.nxt();
        let losses = (self.sb.lost_total - prior_lost) as u32;
        let pick = self.sb.take_rate_pick();
        let rs: RateSample =
            self.rate
                .generate(&mut self.tp, pick, delivered, losses, prior_in_flight);
        self.cc.cong_control(&mut self.tp, &rs);
    }

    /// Whether the next new segment may leave now: inside the receiver's window (flow control),
    /// then past the send jitter. Only for `gated` senders.
    #[inline(never)]
    fn new_data_gate(&mut self, now: SimTime) -> bool {
        if self.window.is_some() && !self.window_admits_next(now) {
            self.tp.is_cwnd_limited = false;
            return false;
        }
        self.jitter_allows(now)
    }

    /// Whether the next packet may leave now under the send jitter ([`TcpConfig::send_jitter`]).
    #[inline(always)]
    fn jitter_allows(&mut self, now: SimTime) -> bool {
        self.cfg.send_jitter == SimTime::ZERO || self.jitter_gate(now)
    }

    /// ns-2 `TcpAgent::send_much` with `overhead_` (tcp.cc, ns-2.35): when a packet could go and
    /// the delayed-send timer is idle, the agent arms it with U(0, overhead_) and sends nothing;
    /// when it expires, `timeout(TCP_TIMER_DELSND)` calls `send_much(force = 1)`, which sends
    /// everything the window allows at once. The next opportunity draws a new delay, so a
    /// sender's packets stay in order and each flight leaves one random delay late.
    #[inline(never)]
    fn jitter_gate(&mut self, now: SimTime) -> bool {
        if self.jitter_open {
            return true;
        }
        match self.jitter_at {
            Some(t) if now >= t => {
                // The delay has passed: this transmit call is the forced send_much.
                self.jitter_at = None;
                self.jitter_open = true;
                true
            }
            Some(_) => false,
            None => {
                let d = (self.jitter_rng.uniform() * self.cfg.send_jitter.as_nanos() as f64) as u64;
                if d == 0 {
                    self.jitter_open = true;
                    return true;
                }
                self.jitter_at = Some(now + SimTime(d));
                false
            }
        }
    }

    /// Mark newly SACKed segments, skipping ranges the previous ACK already reported.
    #[inline]
    fn process_sack(&mut self, now: SimTime, p: &Packet) -> u32 {
        // The common case without loss: no blocks now or before, nothing to do.
        if p.sack.is_empty() && self.prev_sack_n == 0 {
            return 0;
        }
        if self.rack_tlp {
            // RACK judges the segments SACKed below by this ACK.
            self.sb.rack_begin_ack(now, self.rtt.min_rtt, p.ts);
        }
        self.process_sack_blocks(p.seq, &p.sack)
    }

    #[inline(never)]
    fn process_sack_blocks(&mut self, ack: u64, blocks: &SackBlocks) -> u32 {
        // The previous ACK's ranges, by start: their segments were marked then.
        let mut prev = self.prev_sack;
        let prev = &mut prev[..self.prev_sack_n];
        prev.sort_unstable();
        let mut newly = 0;
        let mut ranges = [(0, 0); SackBlocks::MAX];
        let mut k = 0;
        for (bs, be) in blocks.iter(ack) {
            let (s, e) = (bs / self.cfg.mss as u64, self.seg_ceil(be));
            ranges[k] = (s, e);
            k += 1;
            // Mark [s, e) less the previous ranges, in one sweep over them.
            let mut from = s;
            for &(ps, pe) in prev.iter() {
                if pe <= from {
                    continue;
                }
                if ps >= e {
                    break;
                }
                if ps > from {
                    newly += self.sb.mark_sacked(from, ps);
                }
                from = from.max(pe);
            }
            if from < e {
                newly += self.sb.mark_sacked(from, e);
            }
        }
        self.prev_sack = ranges;
        self.prev_sack_n = k;
        newly
    }

    /// The RTT sample of an ACK that advanced snd_una (RFC 7323 §4.3: its timestamp echo).
    #[inline(always)]
    fn sample_rtt(&mut self, now: SimTime, p: &Packet) -> Option<SimTime> {
        if p.ts == 0 {
            return None;
        }
        let r = SimTime((now.as_nanos() + 1).saturating_sub(p.ts));
        self.rtt.sample(r, self.sb.una(), self.sb.nxt());
        self.tp.srtt = self.rtt.srtt();
        self.tp.min_rtt = self.rtt.min_rtt;
        Some(r)
    }

    /// RFC 6298 (5.2)/(5.3) on an ACK that advanced snd_una: stop the timer when all is
    /// acked, else restart it.
    #[inline(always)]
    fn restart_rto(&mut self, now: SimTime) {
        self.rto_deadline = if self.sb.outstanding() == 0 {
            None
        } else {
            Some(now + self.rtt.rto())
        };
    }

    /// Finite transfers only (a bulk flow tests one Option here): the time-averaged window if
    /// kept (an ACK changes cwnd only after this, so the window integrated up to now is the one
    /// held since the previous event), and when the last segment was acknowledged.
    #[inline(always)]
    fn note_finite_progress(&mut self, now: SimTime) {
        if let Some(total) = self.total_segments {
            if let Some(w) = &mut self.window_area {
                w.advance(now, self.tp.snd_cwnd);
            }
            if !self.streaming && self.sb.una() >= total && self.stats.acked_all_at.is_none() {
                self.stats.acked_all_at = Some(now);
            }
        }
    }

    /// Whether an ACK that advances snd_una meets a clean Open state: nothing SACKed, lost or
    /// retransmitted, no duplicate ACKs counted, no SACK blocks in it or in the previous one.
    #[inline(always)]
    fn plain_state(&self, p: &Packet) -> bool {
        self.tp.ca_state == CaState::Open
            && self.dupacks == 0
            && self.reno_sacked == 0
            && p.sack.is_empty()
            && self.prev_sack_n == 0
            && self.sb.is_clean()
    }

    /// The common ACK, as Linux's fast path (`tcp_ack` without `tcp_fastretrans_alert`): it
    /// advances snd_una in a clean Open state ([`TcpSender::plain_state`]) of a sender without
    /// RACK-TLP, rate sampling or ECN (`plain_acks`). What the general path does with such an
    /// ACK, without its tests for recovery, SACK and duplicates, which cannot apply: sample the
    /// RTT, restart the RTO, tell the algorithm, grow cwnd, send (no recovery can start: nothing
    /// is SACKed and no duplicate ACK is counted). The engine's tests run both paths
    /// ([`TcpSender::general_acks_only`]) and require identical results.
    #[inline(always)]
    fn on_plain_ack(&mut self, now: SimTime, ack: u64, p: &Packet, out: &mut Vec<Packet>) {
        let prior_in_flight = self.pipe();
        let delivered = self.sb.advance_to(ack);
        self.tp.delivered += delivered as u64;
        self.tp.snd_una = self.sb.una();
        let rtt = self.sample_rtt(now, p);
        self.restart_rto(now);
        self.note_finite_progress(now);
        if self.pkts_acked_hook {
            let sample = AckSample {
                pkts_acked: delivered,
                rtt,
                in_flight: prior_in_flight,
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }
        let acked = self.growth_credit(delivered);
        self.cc.cong_avoid(&mut self.tp, acked);
        // Still clean: the ACK only moved snd_una (`transmit_clean`).
        self.transmit_clean(now, out);
    }

    /// Send every ACK through the general path (tests: the fast path must change nothing).
    pub fn general_acks_only(&mut self) {
        self.plain_acks = false;
    }

    /// An ACK arrived.
    pub fn on_ack(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        self.tp.now = now;
        if self.window.is_some() {
            self.on_window_ack(now, p);
        }
        let ack = self.seg_ceil(p.seq).min(self.sb.nxt());
        if self.plain_acks && ack > self.sb.una() && self.plain_state(p) {
            self.on_plain_ack(now, ack, p, out);
            return;
        }
        let prior_una = self.sb.una();
        let prior_in_flight = self.pipe();
        let prior_lost = self.sb.lost_total;
        let reno_before = self.reno_sacked;
        let newly_sacked = if self.cfg.recovery == Recovery::Sack {
            self.process_sack(now, p)
        } else {
            0
        };
        let advanced = ack > prior_una;
        if self.rack_tlp {
            self.sb.rack_deliver(ack, now, self.rtt.min_rtt, p.ts);
        }
        let newly_acked = self.sb.advance_to(ack);
        let delivered = newly_acked + newly_sacked;
        self.tp.delivered += delivered as u64;
        self.tp.snd_una = self.sb.una();

        let mut rtt_sample = None;
        if advanced {
            rtt_sample = self.sample_rtt(now, p);
            self.dupacks = 0;
            // NewReno partial ACK: only the first of an episode restarts the timer (RFC 6582
            // §3.2 step 5, Impatient variant).
            let partial = self.cfg.recovery == Recovery::NewReno
                && self.tp.ca_state == CaState::Recovery
                && ack < self.recovery_point;
            self.hold_rto = partial && self.partial_acks > 0;
            if partial {
                self.partial_acks += 1;
            }
            if !self.hold_rto {
                self.restart_rto(now);
            } else if self.sb.outstanding() == 0 {
                self.rto_deadline = None;
            }
            if self.cfg.recovery == Recovery::NewReno {
                if self.tp.ca_state == CaState::Recovery {
                    // Linux tcp_remove_reno_sacks: the acked segments include dup-acked ones.
                    self.reno_sacked = self
                        .reno_sacked
                        .saturating_sub(newly_acked.saturating_sub(1));
                } else {
                    // Linux tcp_fastretrans_alert (default case) and tcp_process_loss: outside
                    // Recovery an advancing ACK resets the dupack count (tcp_reset_reno_sack).
                    // Without this, dupacks caused by go-back-N duplicates after a timeout stay
                    // counted for ever and inflate the window by that many segments.
                    self.reno_sacked = 0;
                }
            }
        } else if p.len == 0 && p.ts > 0 && self.cfg.rtt_samples == RttSamples::EveryAck {
            // ns-2.35 TCP-Linux samples the echo of every ACK it accepts (`RttSamples`): a
            // duplicate ACK's echo is TS.Recent, from before the hole.
            let r = SimTime((now.as_nanos() + 1).saturating_sub(p.ts));
            self.rtt.sample(r, self.sb.una(), self.sb.nxt());
            self.tp.srtt = self.rtt.srtt();
        }
        if !advanced && self.sb.outstanding() > 0 && p.len == 0 {
            // RFC 5681's duplicate ACK; with SACK only those that SACK new data count (below).
            if self.cfg.recovery == Recovery::NewReno {
                self.dupacks += 1;
            }
            if self.cfg.rto_restart == RtoRestart::EveryAck {
                self.rtt.clear_backoff();
                self.rto_deadline = Some(now + self.rtt.rto());
                self.timer = XmitTimer::Rto;
            }
            // Linux tcp_add_reno_sack: a dupack stands for one segment that left the network.
            // After a timeout (Loss) the dupacks still arriving are echoes of the old flight, not
            // of the go-back-N retransmissions, so Linux counts them only once new data beyond
            // the loss point is out (tcp_process_loss). Counting them let every stale dupack
            // release another retransmission with cwnd = 1.
            let counts = self.tp.ca_state != CaState::Loss || self.sb.nxt() > self.recovery_point;
            if self.cfg.recovery == Recovery::NewReno
                && counts
                && self.reno_sacked + 1 < self.sb.outstanding()
            {
                self.reno_sacked += 1;
            }
        }
        // RFC 6675 §2: with SACK a "duplicate acknowledgment" is an ACK that SACKs previously
        // un-SACKed data, whatever else it does (§5: a cumulative ACK first resets the count).
        // Duplicate ACKs without new SACK information (answers to spurious retransmissions after
        // a timeout, window updates) do not count: Linux counts sacked_out, ns-2's TCP-Linux its
        // scoreboard. Counting them started fast recoveries with nothing lost.
        if newly_sacked > 0 && self.cfg.recovery == Recovery::Sack && self.sb.outstanding() > 0 {
            self.dupacks += 1;
        }
        self.note_finite_progress(now);

        if delivered > 0 && self.pkts_acked_hook {
            let sample = AckSample {
                pkts_acked: delivered,
                rtt: rtt_sample,
                in_flight: prior_in_flight,
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }

        let rt = if self.rack_tlp {
            self.rack_tlp_on_ack(now, ack, advanced, newly_sacked, p)
        } else {
            0
        };

        match self.tp.ca_state {
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                if rt & RT_LOST != 0 || self.should_enter_recovery(ack) {
                    self.enter_recovery(now, out);
                } else {
                    if advanced && !self.cong_control {
                        let acked = self.growth_credit(delivered);
                        self.cc.cong_avoid(&mut self.tp, acked);
                    }
                    let disorder = self.dupacks > 0 || self.sb.sacked_out > 0;
                    self.set_state(if disorder {
                        CaState::Disorder
                    } else {
                        CaState::Open
                    });
                }
            }
            CaState::Recovery => {
                if ack >= self.recovery_point {
                    // Full ACK: recovery is over; cwnd stays at ssthresh (RFC 6675 §5, RFC 6582
                    // §3.2 step 3 option 2). A `cong_control` algorithm restores its own cwnd
                    // (Linux tcp_end_cwnd_reduction returns early for it).
                    // ns-2's agent (rate halving) hands the module's window back and moderates.
                    if !self.cong_control {
                        if self.cfg.cwnd_reduction == CwndReduction::RateHalving {
                            self.tp.snd_cwnd = self.rh_floor;
                            self.ns2_exit_moderation();
                        } else {
                            self.tp.snd_cwnd = self.tp.snd_ssthresh.max(1);
                        }
                    }
                    self.rh_limit = 0;
                    self.reno_sacked = 0;
                    self.set_state(CaState::Open);
                    if !self.cong_control {
                        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
                    }
                } else if self.cfg.recovery == Recovery::Sack {
                    self.sb.mark_lost_by_sack(self.sack_dupthresh);
                    if self.lost_retransmit && newly_sacked > 0 && self.sb.has_retransmits_out() {
                        self.sb.mark_lost_retransmits(self.cfg.dupthresh);
                    }
                } else if advanced {
                    // NewReno partial ACK: retransmit the first unacknowledged segment now.
                    let una = self.sb.una();
                    self.sb.mark_lost(una);
                    self.force_retransmit(now, out);
                }
            }
            CaState::Loss => {
                let done = ack >= self.recovery_point;
                if done {
                    self.reno_sacked = 0;
                    self.set_state(CaState::Open);
                }
                if advanced && !self.cong_control {
                    let acked = self.growth_credit(delivered);
                    self.cc.cong_avoid(&mut self.tp, acked);
                }
                // ns-2's agent grows cwnd on this ACK first, then leaves Loss.
                if done
                    && !self.cong_control
                    && self.cfg.cwnd_reduction == CwndReduction::RateHalving
                {
                    self.ns2_exit_moderation();
                }
                if self.cfg.recovery == Recovery::Sack {
                    let pending = self.sb.lost_pending();
                    self.sb.mark_lost_by_sack(self.sack_dupthresh);
                    if self.cfg.loss_state == LossState::Ns2 && !done {
                        self.ns2_loss_to_recovery(pending, newly_sacked, now, out);
                    }
                }
            }
        }
        // ECE after the loss logic: an ACK that starts a recovery has reduced already.
        if self.cfg.ecn && p.flags.has(Flags::ECE) {
            self.on_ece(ack);
        }
        if self.cong_control {
            self.rate_control(delivered, prior_in_flight, prior_lost);
            self.transmit(now, out);
        } else if self.tp.ca_state == CaState::Recovery {
            // NewReno's duplicate ACKs count as deliveries (Linux tcp_add_reno_sack), the
            // segments they stood for not again when acked.
            let reno_delta = self.reno_sacked as i64 - reno_before as i64;
            let d = (delivered as i64 + reno_delta).max(0) as u32;
            self.transmit_in_recovery(d, self.sb.lost_total - prior_lost, advanced, now, out);
        } else {
            self.transmit(now, out);
        }
        self.hold_rto = false;
        if rt & RT_TLP != 0 {
            self.tlp_after_send(now, rt & RT_ADVANCING != 0, rt & RT_ADVANCED != 0);
        }
    }

    /// The probe timer after an ACK or timer has sent what it could (Linux: `tcp_ack` ->
    /// `tcp_set_xmit_timer` on an ACK that advanced snd_una unless RACK armed its timer, then
    /// `tcp_write_xmit` -> `tcp_schedule_loss_probe` after sending new data, which counts the
    /// RTO bound from the head's transmission and, coming later, wins).
    /// A probe pending from before an advancing ACK that is not rescheduled gives way to the
    /// RTO counted from the head (Linux `tcp_rearm_rto`; see `rack_tlp_on_ack`).
    #[inline(never)]
    fn tlp_after_send(&mut self, now: SimTime, advancing: bool, advanced: bool) {
        let scheduled = if self.sent_new {
            self.sent_new = false;
            self.schedule_loss_probe(now, false)
        } else {
            advancing && self.schedule_loss_probe(now, true)
        };
        if !scheduled && self.timer == XmitTimer::Probe {
            if self.rto_deadline.is_none() {
                self.timer = XmitTimer::Rto;
            } else if advanced && self.sb.outstanding() > 0 {
                self.rearm_rto_from_head(now);
            }
        }
    }

    /// RACK-TLP's part of an ACK before the state machine (Linux `tcp_ack`: the RTO re-armed
    /// from the head if a probe or reordering timer was pending (`tcp_rearm_rto`),
    /// `tcp_process_tlp_ack`, then `tcp_fastretrans_alert` -> `tcp_identify_packet_loss`, which
    /// runs on ACKs that are not a clean advance in the Open state). Returns `RT_*` flags: RACK
    /// marked something lost (recovery starts: Linux `tcp_time_to_recover`, "the loss is
    /// proven"), and whether a probe should be scheduled after the state machine.
    #[inline(never)]
    fn rack_tlp_on_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        advanced: bool,
        newly_sacked: u32,
        p: &Packet,
    ) -> u8 {
        // The common ACK path restarted the RTO from now without looking at the slot's kind. A
        // pending reordering timer gives way to the RTO counted from the head (Linux
        // tcp_rearm_rto; RACK may arm its timer again below). A pending probe is left to
        // `tlp_after_send`, which usually schedules it again.
        if advanced && self.timer == XmitTimer::Reo {
            if self.rto_deadline.is_some() && self.sb.outstanding() > 0 {
                self.rearm_rto_from_head(now);
            } else {
                self.timer = XmitTimer::Rto;
            }
        }
        if self.tlp_high.is_some() {
            self.process_tlp_ack(ack, advanced, newly_sacked, p.len == 0);
        }
        let reo_armed = self.rack
            && (newly_sacked > 0 || !advanced || self.tp.ca_state != CaState::Open)
            && self.sb.outstanding() > 0
            && self.rack_mark_lost(now);
        let mut rt = 0;
        if self.rack && self.sb.lost_out > 0 {
            rt |= RT_LOST;
        }
        if self.tlp {
            rt |= RT_TLP;
            if advanced {
                rt |= RT_ADVANCED;
                if !reo_armed {
                    rt |= RT_ADVANCING;
                }
            }
        }
        rt
    }

    /// RACK's reordering window (Linux `tcp_rack_reo_wnd`, RFC 8985 §6.2 step 4): zero until
    /// reordering has been seen if the connection is in recovery (or after a timeout) or
    /// dupthresh segments are SACKed (Linux `tp->reordering`, 3), so that RACK is then as quick
    /// as the DupThresh rule; otherwise min_rtt/4 (Linux: "reordering is often a path property
    /// and less related to queuing or delayed ACKs"), never more than SRTT. No DSACK here, so
    /// the window is never widened (`reo_wnd_steps` = 1).
    fn rack_reo_wnd(&self) -> SimTime {
        if !self.sb.reord_seen
            && (self.tp.ca_state >= CaState::Recovery || self.sb.sacked_out >= self.cfg.dupthresh)
        {
            return SimTime::ZERO;
        }
        match (self.rtt.min_rtt, self.rtt.srtt()) {
            (Some(m), Some(s)) => SimTime(m.as_nanos() / 4).min(s),
            _ => SimTime::ZERO,
        }
    }

    /// Linux `tcp_rack_mark_lost`: if something was delivered since the last scan, mark what
    /// RACK deems lost and, for segments not yet past their deadline, arm the reordering timer
    /// for the longest wait plus `TIMEOUT_MIN`, no later than one RTO from now. Returns whether
    /// the timer was armed.
    #[inline(never)]
    fn rack_mark_lost(&mut self, now: SimTime) -> bool {
        if !self.sb.rack.advanced {
            return false;
        }
        self.sb.rack.advanced = false;
        let reo_wnd = self.rack_reo_wnd();
        match self.sb.rack_detect_loss(now, reo_wnd) {
            Some(wait) => {
                let d = (wait + TIMEOUT_MIN).min(self.rtt.rto());
                self.rto_deadline = Some(now + d);
                self.timer = XmitTimer::Reo;
                true
            }
            None => false,
        }
    }

    /// The reordering timer fired (Linux `tcp_rack_reo_timeout`): mark what has expired by now;
    /// if anything was, enter recovery (unless already there) and retransmit; then re-arm the
    /// RTO from the head's transmission.
    #[inline(never)]
    fn rack_reo_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        let prior_pipe = self.sb.pipe();
        let reo_wnd = self.rack_reo_wnd();
        let _ = self.sb.rack_detect_loss(now, reo_wnd);
        if self.sb.pipe() != prior_pipe {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(now, out);
            } else {
                self.force_retransmit(now, out);
            }
        }
        if self.sb.outstanding() > 0 {
            self.rearm_rto_from_head(now);
        } else {
            self.timer = XmitTimer::Rto;
        }
    }

    /// Linux `tcp_rearm_rto` while a probe or reordering timer holds the slot: the RTO counts
    /// from the head segment's latest transmission, at least `REARM_MIN` from now.
    fn rearm_rto_from_head(&mut self, now: SimTime) {
        let head = self.sb.xmit_time(self.sb.una());
        let at = (head + self.rtt.rto()).max(now + REARM_MIN);
        self.rto_deadline = Some(at);
        self.timer = XmitTimer::Rto;
    }

    /// Linux `tcp_schedule_loss_probe` (RFC 8985 §7.2): in Open or CWR with data out, the slot
    /// holds the probe timeout PTO = 2·SRTT plus `min_rto` when one segment is out (the
    /// receiver may be holding a delayed ACK; Linux `tcp_rto_min_us`, RFC 8985's WCDelAckT) or
    /// plus `TIMEOUT_MIN` otherwise; `initial_rto` without an RTT sample (Linux
    /// TCP_TIMEOUT_INIT, 1 s). Never later than the RTO would fire: one RTO from now on an
    /// advancing ACK (which restarts it), else the RTO counted from the head's transmission.
    fn schedule_loss_probe(&mut self, now: SimTime, advancing: bool) -> bool {
        let out = self.sb.outstanding();
        if out == 0 || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let mut pto = match self.rtt.srtt() {
            Some(s) => {
                SimTime(2 * s.as_nanos())
                    + if out == 1 {
                        self.cfg.min_rto
                    } else {
                        TIMEOUT_MIN
                    }
            }
            None => self.cfg.initial_rto,
        };
        let rto = self.rtt.rto();
        let rto_left = if advancing {
            rto
        } else {
            (self.sb.xmit_time(self.sb.una()) + rto).saturating_sub(now)
        };
        if rto_left > SimTime::ZERO {
            pto = pto.min(rto_left);
        }
        self.rto_deadline = Some(now + pto);
        self.timer = XmitTimer::Probe;
        true
    }

    /// The probe timer fired (Linux `tcp_send_loss_probe`, RFC 8985 §7.3): with no probe
    /// outstanding, send one new segment if there is one and the receive window allows it
    /// (cwnd does not apply), else retransmit the highest outstanding segment; remember
    /// snd_nxt for the ACK that answers it. Then the RTO takes the slot: from now after a probe,
    /// from the head's transmission otherwise.
    #[inline(never)]
    fn send_loss_probe(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.sb.outstanding() == 0 {
            self.rto_deadline = None;
            self.timer = XmitTimer::Rto;
            return;
        }
        let mut sent = false;
        if self.tlp_high.is_none() {
            self.tlp_retrans = false;
            if self.has_new_data()
                && (self.sb.outstanding() as u64) < self.rwnd_segments
                && (self.window.is_none() || self.next_fits_window())
            {
                self.rto_deadline = None;
                // Linux tcp_write_xmit with push_one = 2: cwnd does not apply, and no probe is
                // scheduled for it.
                self.probing = true;
                self.send_new(now, out);
                self.probing = false;
                sent = true;
            } else {
                let last = self.sb.nxt() - 1;
                if !self.sb.is_sacked(last) {
                    self.rto_deadline = None;
                    self.retransmit(last, now, out);
                    self.tlp_retrans = true;
                    sent = true;
                }
            }
        }
        if sent {
            self.tlp_high = Some(self.sb.nxt());
            self.stats.loss_probes += 1;
            // The RTO from now (Linux clears icsk_pending so that tcp_rearm_rto does this).
            self.rto_deadline = Some(now + self.rtt.rto());
            self.timer = XmitTimer::Rto;
        } else {
            self.rearm_rto_from_head(now);
        }
    }

    /// Linux `tcp_process_tlp_ack` (RFC 8985 §7.4): an ACK at or beyond the probe's snd_nxt
    /// ends the episode. A probe of new data needed no repair; after a retransmitted probe, an
    /// ACK beyond it means the probe repaired a loss, which costs one cwnd reduction (CWR:
    /// ssthresh from the algorithm, cwnd = ssthresh, then Open or Disorder); a pure duplicate
    /// ACK means original and probe both arrived. (No DSACK here, see `tcp/rack.rs`.)
    #[inline(never)]
    fn process_tlp_ack(&mut self, ack: u64, advanced: bool, newly_sacked: u32, pure: bool) {
        let Some(high) = self.tlp_high else {
            return;
        };
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high = None;
        } else if ack > high {
            self.tlp_high = None;
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            let ssthresh = self.cc.ssthresh(&self.tp);
            self.tp.snd_ssthresh = ssthresh;
            self.tp.snd_cwnd_cnt = 0;
            self.set_state(CaState::Cwr);
            if !self.cong_control {
                self.tp.snd_cwnd = ssthresh.max(1);
                self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
            }
            // tcp_try_keep_open.
            let left_out = self.sb.sacked_out > 0 || self.sb.lost_out > 0;
            self.set_state(if left_out || self.sb.has_retransmits_out() {
                CaState::Disorder
            } else {
                CaState::Open
            });
        } else if !advanced && newly_sacked == 0 && pure {
            self.tlp_high = None;
        }
    }

    /// Segments an ACK counts for window growth ([`CwndGrowth`]).
    #[inline]
    fn growth_credit(&self, delivered: u32) -> u32 {
        match self.cfg.cwnd_growth {
            CwndGrowth::Segments => delivered,
            CwndGrowth::PerAck => delivered.min(1),
        }
    }

    fn should_enter_recovery(&mut self, ack: u64) -> bool {
        if self.sb.outstanding() == 0 {
            return false;
        }
        match self.cfg.recovery {
            // RFC 6675 §5: DupAcks >= DupThresh, or IsLost(HighACK + 1). Never with RACK
            // (`sack_dupthresh` = u32::MAX; Linux tcp_time_to_recover turns the DupThresh
            // heuristics off with RACK): RACK's marks start recovery (`RT_LOST`).
            Recovery::Sack => {
                self.dupacks >= self.sack_dupthresh
                    || self.sb.mark_lost_by_sack(self.sack_dupthresh) > 0
            }
            // RFC 6582 §3.2 step 2: only if the cumulative ACK covers more than `recover`, the
            // highest segment sent when the last recovery or timeout began. `ack` is the next
            // segment expected, so it covers segments below it: more than `recover` means
            // ack > recover + 1 (ns-2's bugfix_: highest_ack_ > recover_). Dupacks at exactly
            // recover + 1 are echoes of go-back-N duplicates after a timeout (RFC 6582 §4.1);
            // taking them for a new loss started a self-sustaining false recovery.
            Recovery::NewReno => {
                self.dupacks >= self.cfg.dupthresh
                    && (ack > self.recover_guard + 1 || self.recover_guard == 0)
            }
        }
    }

    fn set_state(&mut self, new: CaState) {
        if self.tp.ca_state != new {
            self.cc.set_state(&mut self.tp, new);
            self.tp.ca_state = new;
        }
    }

    /// `LossState::Ns2` on an ACK in Loss that does not end it (ns-2.35 tcp-linux.cc
    /// `tcp_fastretrans_alert`, whose `TCP_CA_Loss` case falls through to the loss branch, and
    /// scoreboard1.cc `UpdateScoreBoard`): a retransmission is lost again once a segment sent
    /// after it is SACKed (`GetSndNxt() <= fack_`, no reordering allowance), and if this ACK
    /// marked anything newly lost (`FLAG_DATA_LOST`: `pending` is the count of lost segments
    /// awaiting retransmission before it) a Recovery starts from the current window.
    fn ns2_loss_to_recovery(
        &mut self,
        pending: u32,
        newly_sacked: u32,
        now: SimTime,
        out: &mut Vec<Packet>,
    ) {
        if newly_sacked > 0 && self.sb.has_retransmits_out() {
            self.sb.mark_lost_retransmits(1);
        }
        if self.sb.lost_pending() > pending {
            self.enter_recovery(now, out);
        }
    }

    fn enter_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        // Only `LossState::Ns2` enters from Loss, whose timeout has marked the head lost already.
        let from_loss = self.tp.ca_state == CaState::Loss;
        self.stats.fast_recoveries += 1;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        // Linux (tcp_fastretrans_alert / tcp_init_cwnd_reduction) asks for ssthresh while the
        // old state is still set, then enters Recovery.
        let ssthresh = self.cc.ssthresh(&self.tp);
        self.set_state(CaState::Recovery);
        self.tp.snd_ssthresh = ssthresh;
        // A `cong_control` algorithm sets cwnd itself on this ACK (Linux: no PRR for it).
        let reduction = if self.cong_control {
            CwndReduction::AtOnce
        } else {
            self.cfg.cwnd_reduction
        };
        if !self.cong_control {
            self.tp.snd_cwnd_cnt = 0;
            match reduction {
                // cwnd follows from prr_reduce on this ACK (Linux tcp_init_cwnd_reduction).
                CwndReduction::Prr => {
                    self.prr_delivered = 0;
                    self.prr_sent_base = self.stats.data_packets_sent;
                }
                CwndReduction::RateHalving => {
                    // ns-2.35 tcp_fastretrans_alert: snd_cwnd = the module's min_cwnd if it has
                    // one (ssthresh / 2 for the Reno family, a quarter of the window), else
                    // ssthresh; rate halving then drains the pipe down to it.
                    self.rh_floor = self.cc.min_cwnd(&self.tp).unwrap_or(ssthresh).max(1);
                    self.tp.snd_cwnd = self.rh_floor;
                    self.rh_limit = self.tp.prior_cwnd.max(1);
                }
                CwndReduction::AtOnce => self.tp.snd_cwnd = ssthresh.max(1),
            }
        }
        self.recovery_point = self.sb.nxt();
        self.recover_guard = self.sb.nxt().saturating_sub(1);
        self.partial_acks = 0;
        // Linux tcp_init_cwnd_reduction ends a TLP episode.
        self.tlp_high = None;
        // The first unacknowledged segment is lost by definition of the entry condition (RFC
        // 6675, RFC 6582); with RACK, RACK has marked what is lost.
        if !self.rack && !from_loss {
            let una = self.sb.una();
            self.sb.mark_lost(una);
        }
        // PRR and rate halving release the fast retransmit through the window (transmit sends
        // lost segments first); "at-once" must force it past a window that is already full.
        if reduction == CwndReduction::AtOnce {
            self.force_retransmit(now, out);
        }
    }

    /// Retransmit the first lost segment regardless of the window (RFC 6675 §5 step 4.1, RFC 6582
    /// §3.2 steps 2 and 5).
    fn force_retransmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let Some(seg) = self.sb.next_lost() {
            self.retransmit(seg, now, out);
        }
    }

    #[inline]
    fn retransmit(&mut self, seg: u64, now: SimTime, out: &mut Vec<Packet>) {
        if self.cong_control {
            let rec = self.rate.on_send(&self.tp, self.sb.outstanding(), true);
            self.sb.set_tx(seg, rec);
        }
        let stamp = if self.sb.timing() {
            self.sb.set_xmit(seg, now)
        } else {
            now
        };
        self.sb.set_retransmitted(seg);
        if (self.lost_retransmit || self.rack || self.cfg.loss_state == LossState::Ns2)
            && self.cfg.recovery == Recovery::Sack
        {
            self.sb.log_retransmit(seg, stamp);
        }
        self.send_segment(seg, true, now, out);
    }

    fn on_rto(&mut self, now: SimTime) {
        if self.sb.outstanding() == 0 {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        // A TLP episode does not survive a timeout (Linux keeps tlp_high_seq, but an ACK beyond
        // it would then count a CWR reduction on top of the timeout's).
        self.tlp_high = None;
        // Linux tcp_enter_loss: reduce ssthresh unless this loss episode already did; with
        // HalveAgain (ns-2 Agent/TCP) any first timeout reduces it, only a repeated one keeps it;
        // with EveryTimeout (ns-2 Agent/TCP/Linux) every one does.
        let reduce = match self.cfg.rto_ssthresh {
            RtoSsthresh::OncePerEpisode => {
                self.tp.ca_state <= CaState::Disorder || self.sb.una() >= self.recovery_point
            }
            RtoSsthresh::HalveAgain => self.tp.ca_state != CaState::Loss,
            RtoSsthresh::EveryTimeout => true,
        };
        // Linux tcp_enter_loss order: ssthresh and CA_EVENT_LOSS (only when reducing), cwnd,
        // then the state change.
        if reduce {
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        self.tp.snd_cwnd = 1; // RFC 5681 §3.1: LW = 1 segment
        self.tp.snd_cwnd_cnt = 0;
        self.rh_limit = 0; // ns-2 timeout(): next_pkts_in_flight_ = 0
        self.set_state(CaState::Loss);
        self.sb.mark_all_lost();
        self.reno_sacked = 0;
        self.dupacks = 0;
        self.prev_sack_n = 0;
        self.recovery_point = self.sb.nxt();
        self.recover_guard = self.sb.nxt().saturating_sub(1);
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.timer = XmitTimer::Rto;
        self.pacing_next = now;
    }

    /// Whether the next new segment lies inside the receiver's advertised window (flow control).
    fn next_fits_window(&self) -> bool {
        let seg = self.sb.nxt();
        let end = seg * self.cfg.mss as u64 + self.seg_len(seg) as u64;
        self.window.as_ref().is_none_or(|w| w.allows(end))
    }

    /// Flow control, before sending new data: whether the window admits the next segment. If it
    /// does not and nothing is outstanding (no ACK will come to open it), the persist timer
    /// takes the empty timer slot (Linux `tcp_check_probe_timer`: after max(RTO, min_rto)).
    #[inline(never)]
    fn window_admits_next(&mut self, now: SimTime) -> bool {
        if self.next_fits_window() {
            return true;
        }
        self.stats.rwnd_limited = true;
        if self.sb.outstanding() == 0 && self.rto_deadline.is_none() {
            let w = self.window.as_ref().expect("flow control");
            self.rto_deadline = Some(now + w.probe_timeout(self.rtt.rto(), self.cfg.max_rto));
            self.timer = XmitTimer::Persist;
        }
        false
    }

    /// Flow control, on every ACK: learn the window; if the persist timer runs, stop it when the
    /// window now admits the next segment (resetting the backoff), else re-arm it from now
    /// (Linux `tcp_ack_probe`).
    #[inline(never)]
    fn on_window_ack(&mut self, now: SimTime, p: &Packet) {
        let w = self.window.as_mut().expect("flow control");
        w.on_ack(p.seq, p.window_field());
        if self.timer != XmitTimer::Persist || self.rto_deadline.is_none() {
            return;
        }
        if !self.has_new_data() || self.next_fits_window() {
            self.window.as_mut().expect("flow control").opened();
            self.rto_deadline = None;
            self.timer = XmitTimer::Rto;
        } else {
            let w = self.window.as_ref().expect("flow control");
            self.rto_deadline = Some(now + w.probe_timeout(self.rtt.rto(), self.cfg.max_rto));
        }
    }

    /// The persist timer fired (Linux `tcp_probe_timer` -> `tcp_send_probe0`): if the window
    /// still admits nothing and nothing is outstanding, send a zero-window probe (a zero-length
    /// segment at the acknowledged `snd_una - 1`, which the receiver answers with its window:
    /// Linux `tcp_xmit_probe_skb`) and wait twice as long for the next; otherwise stop.
    #[inline(never)]
    fn on_persist(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        self.timer = XmitTimer::Rto;
        if self.sb.outstanding() > 0 || !self.has_new_data() || self.next_fits_window() {
            self.window.as_mut().expect("flow control").opened();
            return;
        }
        out.push(Packet {
            flow: self.flow,
            dst: self.peer,
            size: self.cfg.header_bytes,
            kind: PacketKind::Data,
            seq: self.bytes_acked().saturating_sub(1),
            len: 0,
            ts: now.as_nanos() + 1,
            sack: SackBlocks::default(),
            flags: Flags::default(),
            epoch: self.epoch,
        });
        self.stats.window_probes += 1;
        let w = self.window.as_mut().expect("flow control");
        w.probe_sent();
        self.rto_deadline = Some(now + w.probe_timeout(self.rtt.rto(), self.cfg.max_rto));
        self.timer = XmitTimer::Persist;
    }

    /// Scoreboard consistency (tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sb.check_invariants()?;
        if self.tp.snd_ssthresh == 0 {
            return Err("ssthresh is 0".into());
        }
        if self.tp.snd_cwnd == 0 {
            return Err("cwnd is 0".into());
        }
        // Dupacks counted as "SACKed" (NewReno) must not survive into the Open state, where no
        // dupack is outstanding; if they did, pipe would undercount and the window inflate.
        if self.tp.ca_state == CaState::Open && self.reno_sacked != 0 {
            return Err(format!(
                "Open state with {} dupack-sacked segments",
                self.reno_sacked
            ));
        }
        Ok(())
    }
}
