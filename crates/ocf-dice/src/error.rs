//! Why a roll or a distribution failed. Every error has a kebab-case `code()`: the spec's code where
//! the spec names one (`safety-limit-exceeded`, `invalid-face`), otherwise one of ours, listed in
//! `docs/spec/decisions.md`.

use std::fmt;

use ocf_syntax::dice::Die;

use crate::faces::FaceRequest;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiceError {
    /// A safety limit was reached (`limit` is the spec's name, `maxExplosions`, and `max` its value).
    SafetyLimitExceeded { limit: &'static str, max: u32 },
    /// The dice function gave a face the die does not have.
    InvalidFace { die: Die, face: i64 },
    /// The dice function has no face for this request: a fixed list ran out, or a pausing caller
    /// must ask the app for it.
    NoMoreFaces { request: FaceRequest },
    /// A total went past the range of an `i64` (only a huge flat part can do that).
    Overflow,
    /// The exact distribution of this combination of modifiers is not worked out (see
    /// `formulas.md`, Rolling dice values).
    DistributionUnsupported { reason: &'static str },
    /// The exact distribution, or the work of finding it, is past one of our bounds.
    DistributionTooLarge { limit: DistributionLimit },
}

/// Which bound a distribution is past (`docs/spec/decisions.md`, "A bound on the work").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistributionLimit {
    /// It would have more distinct outcomes (or a die more faces) than `max`.
    Outcomes { outcomes: u64, max: u64 },
    /// Finding it takes more than `distribution::MAX_WORK` word operations.
    Work,
    /// Its weights would take more than `distribution::MAX_WORDS` words at once.
    Memory,
    /// A pool of dice meets more than 100 000 cut-down multisets.
    States,
}

impl DiceError {
    pub fn code(&self) -> &'static str {
        match self {
            DiceError::SafetyLimitExceeded { .. } => "safety-limit-exceeded",
            DiceError::InvalidFace { .. } => "invalid-face",
            DiceError::NoMoreFaces { .. } => "no-more-faces",
            DiceError::Overflow => "overflow",
            DiceError::DistributionUnsupported { .. } => "unsupported-distribution",
            DiceError::DistributionTooLarge { .. } => "distribution-too-large",
        }
    }
}

impl fmt::Display for DiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiceError::SafetyLimitExceeded { limit, max } => {
                write!(f, "the roll needs more than {limit} ({max})")
            }
            DiceError::InvalidFace { die, face } => write!(f, "{face} is not a face of a {die}"),
            DiceError::NoMoreFaces { request } => write!(
                f,
                "no face left for a {} ({}, item {}, die {})",
                request.die,
                request.reason.as_str(),
                request.item + 1,
                request.die_index + 1
            ),
            DiceError::Overflow => f.write_str("the total is too large"),
            DiceError::DistributionUnsupported { reason } => {
                write!(f, "no exact distribution: {reason}")
            }
            DiceError::DistributionTooLarge { limit } => match limit {
                DistributionLimit::Outcomes { outcomes, max } => write!(
                    f,
                    "the distribution would have about {outcomes} outcomes, more than {max}"
                ),
                DistributionLimit::Work => f.write_str(
                    "the distribution needs more than 1 500 000 000 word operations to work out",
                ),
                DistributionLimit::Memory => {
                    f.write_str("the distribution's weights would take more than 64 MiB")
                }
                DistributionLimit::States => {
                    f.write_str("the pool of dice needs more than 100 000 states")
                }
            },
        }
    }
}

impl std::error::Error for DiceError {}
