//! PC samples of one launch, as a capture holds them (record kind 6): what
//! CUPTI's PC sampling counted at each instruction, per stall reason, and
//! what the build's instruction → region map says of that instruction.
//! The record's payload is this type as JSON (UTF-8), so that a reader in
//! any language reads it with its JSON library; `docs/capture-format.md`
//! gives the fields.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::pc_map::{PcKind, PcMap};

/// The prefix of CUPTI's stall reason names, left out of
/// [`StallSamples::reasons`]: `smsp__pcsamp_warps_issue_stalled_`.
pub const CUPTI_REASON_PREFIX: &str = "smsp__pcsamp_warps_issue_stalled_";

/// The suffix of the reasons that count only samples of cycles in which
/// the warp's scheduler issued nothing; they repeat samples of the reason
/// without it, so totals leave them out.
pub const NOT_ISSUED_SUFFIX: &str = "_not_issued";

/// The PC samples of one launch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallSamples {
    /// The session's number of the launch (as a traced launch's
    /// `LaunchShape::launch`).
    pub launch: u32,
    /// The session's kernel name.
    pub kernel: String,
    /// The image sampled: the traced build (`true`) or the untraced one.
    pub traced: bool,
    /// The sampling period: one sample every `2^period_log2` cycles per SM.
    pub period_log2: u32,
    /// The stall reasons, CUPTI's names without [`CUPTI_REASON_PREFIX`];
    /// [`PcSample::counts`] index this list.
    pub reasons: Vec<String>,
    /// Samples CUPTI counted in the launch.
    pub total_samples: u64,
    /// Samples CUPTI dropped (its buffers were full).
    pub dropped_samples: u64,
    /// Why the instructions carry no regions, when the build made no map
    /// for the image (or the image was not one ktrace built).
    pub unmapped: Option<String>,
    /// Each instruction that was sampled.
    pub pcs: Vec<PcSample>,
}

/// One sampled instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcSample {
    /// The function (mangled name).
    pub function: String,
    /// Byte offset of the instruction in the function.
    pub offset: u64,
    /// `(reason index, samples)` for each reason with samples.
    pub counts: Vec<(u32, u32)>,
    /// The regions around the instruction (ids of the capture's region
    /// table), from the map.
    pub regions: Vec<u16>,
    /// User code, a marker's own instruction, or not placed.
    pub kind: PcKind,
    /// Source file, when known.
    pub file: Option<String>,
    /// Source line (0 when unknown).
    pub line: u32,
    /// Opcode with modifiers (empty when unknown).
    pub opcode: String,
    /// The regions of the barrier just before it (a `BAR` or `MEMBAR`
    /// instruction at most [`BARRIER_WINDOW`] instructions before), where
    /// the samples of [`WAITS_AFTER`] reasons belong: a warp waiting at a
    /// barrier is sampled past it, at the first instruction it cannot
    /// issue.
    #[serde(default)]
    pub barrier_regions: Vec<u16>,
    /// What that barrier instruction is (`unknown` when there is none).
    #[serde(default = "unknown")]
    pub barrier_kind: PcKind,
}

fn unknown() -> PcKind {
    PcKind::Unknown
}

/// The stall reasons whose samples fall after the instruction that waits
/// (the barrier or memory barrier already issued): counted in the regions
/// of that barrier ([`PcSample::barrier_regions`]).
pub const WAITS_AFTER: &[&str] = &["barrier", "membar"];

/// Bytes of one SASS instruction (sm_70 and later).
pub const INSTRUCTION_BYTES: u64 = 16;

/// How many instructions back a barrier is looked for: on the H200 a warp
/// waiting at `BAR.SYNC.DEFER_BLOCKING` is sampled one or two
/// instructions past it.
pub const BARRIER_WINDOW: u64 = 4;

/// Whether `opcode` is a barrier whose waits are sampled past it.
pub fn is_barrier(opcode: &str) -> bool {
    opcode == "BAR" || opcode.starts_with("BAR.") || opcode.starts_with("MEMBAR")
}

impl PcSample {
    /// An instruction with its counts, placed by `map` (not placed when
    /// the map lacks it).
    pub fn placed(function: &str, offset: u64, counts: Vec<(u32, u32)>, map: &PcMap) -> Self {
        let info = map.get(function, offset);
        let barrier = (1..=BARRIER_WINDOW)
            .filter_map(|k| offset.checked_sub(k * INSTRUCTION_BYTES))
            .filter_map(|o| map.get(function, o))
            .find(|i| is_barrier(&i.opcode));
        PcSample {
            barrier_regions: barrier.map(|i| i.regions.clone()).unwrap_or_default(),
            barrier_kind: barrier.map_or(PcKind::Unknown, |i| i.kind),
            function: function.to_string(),
            offset,
            counts,
            regions: info.map(|i| i.regions.clone()).unwrap_or_default(),
            kind: info.map_or(PcKind::Unknown, |i| i.kind),
            file: info.and_then(|i| i.location.as_ref().map(|l| l.0.clone())),
            line: info
                .and_then(|i| i.location.as_ref().map(|l| l.1))
                .unwrap_or(0),
            opcode: info.map(|i| i.opcode.clone()).unwrap_or_default(),
        }
    }
}

impl StallSamples {
    /// Whether reason `index` counts towards totals (it is not a
    /// `_not_issued` repeat).
    pub fn counts_reason(&self, index: u32) -> bool {
        self.reasons
            .get(index as usize)
            .is_some_and(|r| !r.ends_with(NOT_ISSUED_SUFFIX))
    }

    /// The samples at `pc`, each once (the `_not_issued` repeats left out).
    pub fn pc_samples(&self, pc: &PcSample) -> u64 {
        pc.counts
            .iter()
            .filter(|(r, _)| self.counts_reason(*r))
            .map(|&(_, n)| u64::from(n))
            .sum()
    }

    /// The launch's samples, each once.
    pub fn samples(&self) -> u64 {
        self.pcs.iter().map(|pc| self.pc_samples(pc)).sum()
    }

    /// The record's payload.
    pub(crate) fn to_payload(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("stall samples serialize")
    }

    /// Reads a record's payload, checking that every count names a reason.
    pub(crate) fn from_payload(bytes: &[u8]) -> Result<Self> {
        let s: StallSamples = serde_json::from_slice(bytes)
            .map_err(|e| Error::Corrupt(format!("PC sample record: {e}")))?;
        let reasons = s.reasons.len() as u32;
        if let Some(pc) = s
            .pcs
            .iter()
            .find(|pc| pc.counts.iter().any(|&(r, _)| r >= reasons))
        {
            return Err(Error::Corrupt(format!(
                "PC sample record of launch {}: {}+{:#x} counts a reason past the {reasons} named",
                s.launch, pc.function, pc.offset
            )));
        }
        Ok(s)
    }
}

/// A CUPTI stall reason name without its prefix.
pub fn short_reason(name: &str) -> &str {
    name.strip_prefix(CUPTI_REASON_PREFIX).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_and_a_count_past_the_reasons_is_refused() {
        let map = PcMap::parse(
            "ktrace-pcmap 1\nfile 0 /k.cu\nfunction k\n0000 1 u 0:6 BAR.SYNC\n0010 2 u 0:7 LDG.E\n\
             0060 2 u 0:8 HGMMA\n",
        )
        .unwrap();
        let s = StallSamples {
            launch: 3,
            kernel: "k".into(),
            period_log2: 10,
            reasons: vec![
                "long_scoreboard".into(),
                "long_scoreboard_not_issued".into(),
            ],
            total_samples: 9,
            pcs: vec![
                PcSample::placed("k", 0x10, vec![(0, 5), (1, 4)], &map),
                PcSample::placed("k", 0x20, vec![(0, 4)], &map),
            ],
            ..Default::default()
        };
        assert_eq!(s.pcs[0].regions, [2]);
        assert_eq!(
            (s.pcs[0].file.as_deref(), s.pcs[0].line),
            (Some("/k.cu"), 7)
        );
        assert_eq!(s.pcs[1].kind, PcKind::Unknown);
        assert_eq!(
            (s.pcs[0].barrier_regions.as_slice(), s.pcs[0].barrier_kind),
            (&[1u16][..], PcKind::User)
        );
        // two instructions past the barrier: still its wait
        assert_eq!(s.pcs[1].barrier_regions, [1]);
        // five past it, behind an HGMMA: no barrier
        let far = PcSample::placed("k", 0x70, vec![(0, 1)], &map);
        assert_eq!((far.barrier_kind, far.regions.len()), (PcKind::Unknown, 0));
        assert!(is_barrier("BAR.SYNC.DEFER_BLOCKING") && is_barrier("MEMBAR.ALL.GPU"));
        assert!(!is_barrier("WARPGROUP.DEPBAR.LE") && !is_barrier("BRA"));
        assert!(s.counts_reason(0) && !s.counts_reason(1) && !s.counts_reason(2));
        assert_eq!(StallSamples::from_payload(&s.to_payload()).unwrap(), s);
        let mut bad = s.clone();
        bad.pcs[1].counts.push((2, 1));
        let e = StallSamples::from_payload(&bad.to_payload()).unwrap_err();
        assert!(
            e.to_string().contains("k+0x20 counts a reason past the 2"),
            "{e}"
        );
        assert!(StallSamples::from_payload(b"{").is_err());
        assert_eq!(
            short_reason("smsp__pcsamp_warps_issue_stalled_barrier"),
            "barrier"
        );
    }
}
