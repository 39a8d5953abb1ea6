//! The hand encoder of the event packets, one per event: the fast path for
//! an event with neither annotations nor interned data, the general path
//! for the others, and the varints, interned names and debug annotations
//! they are made of. Each packet is byte for byte what `prost` writes for
//! the same message (the unit test below checks it).

use std::io::{self, Write};

use super::lanes::Ev;
use super::tracks::overlap_track;
use super::{ns_at, PerfettoWriter, SLACK, SLICE_BEGIN, SLICE_END};
use crate::diagnostics::WarpId;

impl<W: Write> PerfettoWriter<W> {
    /// Encodes what every event packet of the warp `id`, on sequence `seq`,
    /// repeats: the sequence id field and, with annotations, the warp's
    /// `sm`, `block` and `warp`.
    pub(super) fn start_sequence_fields(&mut self, id: WarpId, seq: u32) {
        if self.opts.args {
            self.warp_args.clear();
            push_annotation(&mut self.warp_args, 1, u64::from(id.sm));
            push_annotation(&mut self.warp_args, 2, u64::from(id.block));
            push_annotation(&mut self.warp_args, 3, u64::from(id.warp));
        }
        let mut sf = [0u8; 6];
        sf[0] = 0x50;
        let n = 1 + write_varint(&mut sf[1..], u64::from(seq));
        self.seq_field = (sf, n);
    }

    /// Appends the event packets of `evs`, the current warp's events.
    pub(super) fn events_of_warp(
        &mut self,
        evs: &[Ev],
        base_ns: i64,
        first_ns: u64,
        warp_uuid: u64,
    ) -> io::Result<()> {
        let (sf, sn) = self.seq_field;
        let mut last_ns = first_ns;
        // The buffer and its cursor are locals here, so that the byte
        // stores do not make the compiler reload them.
        let mut pos = self.pos;
        let mut limit = self.out.len() - SLACK;
        for e in evs {
            if pos > limit {
                pos = self.spill(pos)?;
                limit = self.out.len() - SLACK;
            }
            let ns = ns_at(base_ns, e.t);
            let delta = ns - last_ns;
            last_ns = ns;
            let slot = e.slot as usize;
            let named = e.kind != SLICE_END;
            let iid = slot as u64 + 1;
            let track = (e.lane != 0).then(|| overlap_track(warp_uuid, e.lane));
            let intern = named && self.table.interned[slot] != self.seq;
            if intern || (self.opts.args && named) || e.value.is_some() || e.end_value.is_some() {
                self.pos = pos;
                self.event_with_extras(delta, e, track, intern)?;
                pos = self.pos;
                limit = self.out.len() - SLACK;
            } else {
                let out: &mut [u8; SLACK] = (&mut self.out[pos..pos + SLACK])
                    .try_into()
                    .expect("SLACK bytes");
                pos += encode_small_event(out, delta, &sf, sn, e.kind, named.then_some(iid), track);
            }
            self.track_events += 1;
            self.events += u64::from(e.kind != SLICE_BEGIN);
        }
        self.pos = pos;
        Ok(())
    }

    /// Appends an event packet that carries annotations or interns its
    /// name (the first use of a region's name on the sequence).
    #[cold]
    fn event_with_extras(
        &mut self,
        delta: u64,
        e: &Ev,
        track: Option<u64>,
        intern: bool,
    ) -> io::Result<()> {
        let slot = e.slot as usize;
        let named = e.kind != SLICE_END;
        let iid = slot as u64 + 1;
        self.intern_buf.clear();
        if intern {
            self.table.interned[slot] = self.seq;
            let name = self.table.names[slot].as_deref().unwrap_or_default();
            push_interned_name(&mut self.intern_buf, iid, name.as_bytes());
        }
        let no_args: &[u8] = &[];
        self.value_args.clear();
        if let Some(v) = e.value {
            push_named_annotation(&mut self.value_args, "value", u64::from(v));
        }
        if let Some(v) = e.end_value {
            push_named_annotation(&mut self.value_args, "end_value", u64::from(v));
        }
        let args = if self.opts.args && named {
            [
                self.warp_args.as_slice(),
                self.table.region_args[slot].as_slice(),
                self.value_args.as_slice(),
            ]
        } else {
            [no_args, no_args, self.value_args.as_slice()]
        };
        let (sf, sn) = self.seq_field;
        let mut pkt = std::mem::take(&mut self.pkt);
        pkt.clear();
        encode_event(
            &mut pkt,
            EventFields {
                delta,
                seq_field: &sf[..sn],
                kind: e.kind,
                name_iid: named.then_some(iid),
                track_uuid: track,
                args,
                interned: &self.intern_buf,
            },
        );
        let r = self.put(&pkt);
        self.pkt = pkt;
        r
    }
}

/// The fields of one event packet.
struct EventFields<'a> {
    /// Nanoseconds since the sequence's previous event.
    delta: u64,
    /// Field 10 (`trusted_packet_sequence_id`), encoded.
    seq_field: &'a [u8],
    /// `TrackEvent.type`.
    kind: u8,
    /// `TrackEvent.name_iid`.
    name_iid: Option<u64>,
    /// `TrackEvent.track_uuid`, when not the sequence's default.
    track_uuid: Option<u64>,
    /// `TrackEvent.debug_annotations`, encoded (three runs).
    args: [&'a [u8]; 3],
    /// Field 12 (`interned_data`), encoded, or empty.
    interned: &'a [u8],
}

/// Appends a `Trace.packet` holding a TracePacket with a TrackEvent,
/// byte for byte as `prost` encodes the same message: fields in tag
/// order, the `data` oneof (tags 6, 11, 60) first.
#[inline]
fn encode_event(out: &mut Vec<u8>, f: EventFields<'_>) {
    // After the annotations: TrackEvent's type (9), name_iid (10) and
    // track_uuid (11), then the packet's timestamp (8) and sequence id (10).
    let mut tail = [0u8; 48];
    tail[0] = 0x48;
    tail[1] = f.kind;
    let mut n = 2;
    if let Some(iid) = f.name_iid {
        tail[n] = 0x50;
        n += 1 + write_varint(&mut tail[n + 1..], iid);
    }
    if let Some(u) = f.track_uuid {
        tail[n] = 0x58;
        n += 1 + write_varint(&mut tail[n + 1..], u);
    }
    let te_len = f.args[0].len() + f.args[1].len() + f.args[2].len() + n;
    let te_end = n;
    tail[n] = 0x40;
    n += 1 + write_varint(&mut tail[n + 1..], f.delta);
    tail[n..n + f.seq_field.len()].copy_from_slice(f.seq_field);
    n += f.seq_field.len();
    let packet_len = 1 + varint_len(te_len as u64) + te_len + (n - te_end) + f.interned.len();
    let mut head = [0u8; 24];
    head[0] = 0x0a;
    let mut h = 1 + write_varint(&mut head[1..], packet_len as u64);
    head[h] = 0x5a;
    h += 1 + write_varint(&mut head[h + 1..], te_len as u64);
    out.extend_from_slice(&head[..h]);
    out.extend_from_slice(f.args[0]);
    out.extend_from_slice(f.args[1]);
    out.extend_from_slice(f.args[2]);
    out.extend_from_slice(&tail[..n]);
    out.extend_from_slice(f.interned);
}

/// [`encode_event`] for an event without annotations or interned data,
/// whose packet is at most 45 bytes: written at the start of `b`, its two
/// lengths patched in at the end. Returns its length.
#[inline(always)]
fn encode_small_event(
    b: &mut [u8; SLACK],
    delta: u64,
    seq_field: &[u8; 6],
    seq_len: usize,
    kind: u8,
    name_iid: Option<u64>,
    track_uuid: Option<u64>,
) -> usize {
    // 0a LEN 5a LEN | 48 kind [50 iid] [58 uuid] | 40 delta | 50 seq:
    // at most 4 + 2 + 11 + 11 + 11 + 6 = 45 bytes.
    b[0] = 0x0a;
    b[2] = 0x5a;
    b[4] = 0x48;
    b[5] = kind;
    let mut n = 6;
    if let Some(iid) = name_iid {
        b[n] = 0x50;
        n = put_varint(b, n + 1, iid);
    }
    if let Some(u) = track_uuid {
        b[n] = 0x58;
        n = put_varint(b, n + 1, u);
    }
    let te_len = n - 4;
    b[n] = 0x40;
    n = put_varint(b, n + 1, delta);
    // All six bytes in one store; those past `seq_len` are scratch that
    // the next packet overwrites.
    b[n & (SLACK - 1)..][..6].copy_from_slice(seq_field);
    n += seq_len;
    b[1] = (n - 2) as u8;
    b[3] = te_len as u8;
    n
}

/// Writes `v` as a varint into `b` at `at`; returns where it ends.
#[inline(always)]
fn put_varint(b: &mut [u8; SLACK], mut at: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        b[at & (SLACK - 1)] = (v as u8) | 0x80;
        v >>= 7;
        at += 1;
    }
    b[at & (SLACK - 1)] = v as u8;
    at + 1
}

/// Appends field 12 (`interned_data`) holding one event name.
fn push_interned_name(out: &mut Vec<u8>, iid: u64, name: &[u8]) {
    // EventName { iid (1), name (2) } in InternedData.event_names (2).
    let en_len = 1 + varint_len(iid) + 1 + varint_len(name.len() as u64) + name.len();
    let id_len = 1 + varint_len(en_len as u64) + en_len;
    out.push(0x62);
    push_varint(out, id_len as u64);
    out.push(0x12);
    push_varint(out, en_len as u64);
    out.push(0x08);
    push_varint(out, iid);
    out.push(0x12);
    push_varint(out, name.len() as u64);
    out.extend_from_slice(name);
}

/// The length of `v` as a varint.
#[inline]
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends a `DebugAnnotation { name_iid, uint_value }` as field 4 of a
/// TrackEvent.
pub(super) fn push_annotation(out: &mut Vec<u8>, name_iid: u64, value: u64) {
    let mut body = [0u8; 24];
    body[0] = 0x08;
    let mut n = 1 + write_varint(&mut body[1..], name_iid);
    body[n] = 0x18;
    n += 1 + write_varint(&mut body[n + 1..], value);
    out.push(0x22);
    out.push(n as u8);
    out.extend_from_slice(&body[..n]);
}

/// Appends a `TrackEvent.debug_annotations` entry with a literal `name`
/// (not interned) and an unsigned value, fields in tag order (`uint_value`
/// 3, `name` 10).
fn push_named_annotation(out: &mut Vec<u8>, name: &str, value: u64) {
    let mut body = [0u8; 11];
    body[0] = 0x18;
    let n = 1 + write_varint(&mut body[1..], value);
    out.push(0x22);
    push_varint(out, (n + 2 + name.len()) as u64);
    out.extend_from_slice(&body[..n]);
    out.push(0x52);
    push_varint(out, name.len() as u64);
    out.extend_from_slice(name.as_bytes());
}

/// Writes `v` as a varint at the start of `buf`; returns its length.
#[inline]
fn write_varint(buf: &mut [u8], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        buf[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    buf[i] = v as u8;
    i + 1
}

/// Appends `v` as a varint.
pub(super) fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; 10];
    let n = write_varint(&mut b, v);
    out.extend_from_slice(&b[..n]);
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::super::proto as pb;
    use super::super::{INSTANT, WRITER_SEQUENCE_ID};
    use super::*;

    /// One event packet's fields, drawn at random, with its parts encoded.
    struct Case<'a> {
        /// The draw the values derive from.
        x: u64,
        delta: u64,
        seq: u32,
        kind: u8,
        iid: Option<u64>,
        track: Option<u64>,
        /// The `sm`, `block`, `warp` annotations and the `region` one.
        args: Option<(Vec<u8>, Vec<u8>)>,
        /// `value` and, every other time, `end_value`.
        values: Option<Vec<u8>>,
        /// The interned name and its encoding (empty without one).
        interned: Option<&'a str>,
        ib: Vec<u8>,
        /// The sequence id field and its length.
        sf: [u8; 6],
        sn: usize,
    }

    /// The `i`-th case, drawn from `next`.
    fn draw<'a>(i: u64, next: &mut impl FnMut() -> u64, names: &[&'a str; 3]) -> Case<'a> {
        let x = next();
        let delta = x >> (x % 64);
        let seq = (WRITER_SEQUENCE_ID + 1).wrapping_add((x >> 7) as u32 % 5_000_000);
        let kind = [SLICE_BEGIN, SLICE_END, INSTANT][(i % 3) as usize];
        let iid = (kind != SLICE_END).then_some(1 + (x >> 11) % 70_000);
        let track = (i % 5 == 0).then_some(next());
        let args = (i % 4 == 0).then(|| {
            let mut a = Vec::new();
            push_annotation(&mut a, 1, x % 200);
            push_annotation(&mut a, 2, next() % 1_000_000);
            push_annotation(&mut a, 3, x % 32);
            let mut r = Vec::new();
            push_annotation(&mut r, 4, next() % 65_536);
            (a, r)
        });
        let values = (i % 6 == 0).then(|| {
            let mut v = Vec::new();
            push_named_annotation(&mut v, "value", x % 5_000_000_000);
            if i % 12 == 0 {
                push_named_annotation(&mut v, "end_value", u64::from(u32::MAX));
            }
            v
        });
        let interned = (i % 7 == 0 && iid.is_some()).then(|| names[(i % 3) as usize]);
        let mut ib = Vec::new();
        if let (Some(name), Some(iid)) = (interned, iid) {
            push_interned_name(&mut ib, iid, name.as_bytes());
        }
        let mut sf = [0u8; 6];
        sf[0] = 0x50;
        let sn = 1 + write_varint(&mut sf[1..], u64::from(seq));
        Case {
            x,
            delta,
            seq,
            kind,
            iid,
            track,
            args,
            values,
            interned,
            ib,
            sf,
            sn,
        }
    }

    /// The case's packet as [`encode_event`] writes it.
    fn hand_encoded(c: &Case<'_>) -> Vec<u8> {
        let mut ours = Vec::new();
        let empty: &[u8] = &[];
        encode_event(
            &mut ours,
            EventFields {
                delta: c.delta,
                seq_field: &c.sf[..c.sn],
                kind: c.kind,
                name_iid: c.iid,
                track_uuid: c.track,
                args: {
                    let v = c.values.as_deref().unwrap_or(empty);
                    c.args
                        .as_ref()
                        .map_or([empty, empty, v], |(a, r)| [a.as_slice(), r.as_slice(), v])
                },
                interned: &c.ib,
            },
        );
        ours
    }

    /// The case's annotations, decoded with `prost`, checked against the
    /// values encoded (case `i`).
    fn decoded_annotations(i: u64, c: &Case<'_>) -> Vec<pb::DebugAnnotation> {
        let annotation = |name_iid: u64, v: u64| pb::DebugAnnotation {
            name_iid: Some(name_iid),
            uint_value: Some(v),
            name: None,
        };
        let empty: &[u8] = &[];
        let mut v = Vec::new();
        let (a, r) = c
            .args
            .as_ref()
            .map_or((empty, empty), |(a, r)| (a.as_slice(), r.as_slice()));
        for chunk in [a, r, c.values.as_deref().unwrap_or(empty)] {
            let mut buf = chunk;
            while !buf.is_empty() {
                let len = usize::from(buf[1]);
                v.push(pb::DebugAnnotation::decode(&buf[2..2 + len]).unwrap());
                buf = &buf[2 + len..];
            }
        }
        // The decoded annotations are the ones encoded.
        if c.args.is_some() {
            assert_eq!(v[3], annotation(4, v[3].uint_value.unwrap()));
        }
        if c.values.is_some() {
            let k = if c.args.is_some() { 4 } else { 0 };
            assert_eq!(v[k].name.as_deref(), Some("value"));
            assert_eq!(v[k].uint_value, Some(c.x % 5_000_000_000));
            assert_eq!(v.len() - k, if i % 12 == 0 { 2 } else { 1 });
        }
        v
    }

    /// The case's packet as `prost` encodes the same message.
    fn prost_encoded(i: u64, c: &Case<'_>) -> Vec<u8> {
        pb::Trace {
            packet: vec![pb::TracePacket {
                timestamp: Some(c.delta),
                trusted_packet_sequence_id: Some(c.seq),
                interned_data: c.interned.map(|name| pb::InternedData {
                    event_names: vec![pb::EventName {
                        iid: c.iid,
                        name: Some(name.into()),
                    }],
                    debug_annotation_names: Vec::new(),
                }),
                data: Some(pb::trace_packet::Data::TrackEvent(pb::TrackEvent {
                    r#type: Some(i32::from(c.kind)),
                    track_uuid: c.track,
                    name_iid: c.iid,
                    name: None,
                    debug_annotations: decoded_annotations(i, c),
                })),
                ..Default::default()
            }],
        }
        .encode_to_vec()
    }

    #[test]
    fn hand_encoded_event_packets_are_what_prost_writes() {
        let mut next = crate::synth::xorshift64(0x1234_5678_9abc_def1);
        let long = "x".repeat(300);
        let names = ["r", "a longer region name", long.as_str()];
        for i in 0..3000u64 {
            let c = draw(i, &mut next, &names);
            let ours = hand_encoded(&c);
            let expected = prost_encoded(i, &c);
            assert_eq!(ours, expected, "packet {i}");
            if c.args.is_none() && c.values.is_none() && c.interned.is_none() {
                let mut small = [7u8; SLACK];
                let n =
                    encode_small_event(&mut small, c.delta, &c.sf, c.sn, c.kind, c.iid, c.track);
                assert_eq!(small[..n], expected[..], "small packet {i}");
            }
            assert_eq!(varint_len(c.delta), {
                let mut b = [0u8; 10];
                write_varint(&mut b, c.delta)
            });
        }
    }
}
