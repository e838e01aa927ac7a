//! A term's modifiers, read once into the rules both the roller and the distribution follow,
//! whatever order they were written in (`formulas.md`, Rolling dice values):
//! rerolls, then explosions, then minimum and maximum, then keep and drop, then counting.

use ocf_syntax::dice::{Compare, CompareOp, Die, Modifier};

use crate::value::DiceTerm;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RerollRule {
    pub at: Compare,
    pub once: bool,
    pub count: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExplodeRule {
    pub at: Compare,
    pub compound: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeepDrop {
    KeepHighest(u32),
    KeepLowest(u32),
    DropHighest(u32),
    DropLowest(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TermRules {
    pub die: Die,
    /// The first reroll or rerollOnce written; later ones are ignored.
    pub reroll: Option<RerollRule>,
    /// The first explode or explodeCompound written; later ones are ignored.
    pub explode: Option<ExplodeRule>,
    /// The first minimum and the first maximum written.
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    /// Every keep and drop, in written order: each narrows the dice the one before kept.
    pub keep_drop: Vec<KeepDrop>,
    pub successes: Vec<Compare>,
    pub failures: Vec<Compare>,
}

impl TermRules {
    pub fn new(term: &DiceTerm) -> TermRules {
        let mut rules = TermRules {
            die: term.die,
            reroll: None,
            explode: None,
            minimum: None,
            maximum: None,
            keep_drop: Vec::new(),
            successes: Vec::new(),
            failures: Vec::new(),
        };
        let highest = Compare {
            op: CompareOp::Eq,
            value: term.die.face_range().1,
        };
        for m in &term.modifiers {
            match *m {
                Modifier::KeepHighest(n) => rules.keep_drop.push(KeepDrop::KeepHighest(n)),
                Modifier::KeepLowest(n) => rules.keep_drop.push(KeepDrop::KeepLowest(n)),
                Modifier::DropHighest(n) => rules.keep_drop.push(KeepDrop::DropHighest(n)),
                Modifier::DropLowest(n) => rules.keep_drop.push(KeepDrop::DropLowest(n)),
                Modifier::Explode(at) | Modifier::ExplodeCompound(at) => {
                    let compound = matches!(m, Modifier::ExplodeCompound(_));
                    rules.explode.get_or_insert(ExplodeRule {
                        at: at.unwrap_or(highest),
                        compound,
                    });
                }
                Modifier::Reroll { at, count } => {
                    rules.reroll.get_or_insert(RerollRule {
                        at,
                        once: false,
                        count,
                    });
                }
                Modifier::RerollOnce { at, count } => {
                    rules.reroll.get_or_insert(RerollRule {
                        at,
                        once: true,
                        count,
                    });
                }
                Modifier::CountSuccesses(c) => rules.successes.push(c),
                Modifier::CountFailures(c) => rules.failures.push(c),
                Modifier::Minimum(n) => {
                    rules.minimum.get_or_insert(n);
                }
                Modifier::Maximum(n) => {
                    rules.maximum.get_or_insert(n);
                }
            }
        }
        rules
    }

    /// A face as it counts: raised to the minimum, then lowered to the maximum.
    pub fn clamp(&self, face: i64) -> i64 {
        let face = self.minimum.map_or(face, |min| face.max(min));
        self.maximum.map_or(face, |max| face.min(max))
    }

    pub fn counts(&self) -> bool {
        !self.successes.is_empty() || !self.failures.is_empty()
    }

    /// What a kept die adds when counting: +1 for a success, -1 for a failure (both: 0). With
    /// `countFailures` alone, the failures are what is counted: +1 each.
    pub fn score(&self, value: i64) -> i64 {
        let failure = i64::from(self.failures.iter().any(|c| c.matches(value)));
        if self.successes.is_empty() {
            return failure;
        }
        i64::from(self.successes.iter().any(|c| c.matches(value))) - failure
    }

    /// Which ranks of `n` dice, sorted from lowest to highest, are kept: `lo..hi`.
    pub fn kept_ranks(&self, n: usize) -> (usize, usize) {
        let (mut lo, mut hi) = (0usize, n);
        for kd in &self.keep_drop {
            match *kd {
                KeepDrop::KeepHighest(k) => lo = lo.max(hi.saturating_sub(k as usize)),
                KeepDrop::KeepLowest(k) => hi = hi.min(lo.saturating_add(k as usize)),
                KeepDrop::DropHighest(d) => hi = lo.max(hi.saturating_sub(d as usize)),
                KeepDrop::DropLowest(d) => lo = hi.min(lo.saturating_add(d as usize)),
            }
        }
        (lo, hi)
    }

    /// Each face of an explosion chain is a die of its own (`!`), rather than part of one die (`!!`).
    pub fn separate_explosions(&self) -> bool {
        self.explode.is_some_and(|e| !e.compound)
    }
}
