//! Rolling a dice value into roll items (`formulas.md`, Rolling dice values).
//!
//! Faces are asked for in rounds, so that a pausing caller asks the app for as few batches as it
//! can: first every initial die in order, then one round of rerolls at a time (every die that
//! needs one, in die order), then one round of explosions at a time. An item's `faces` lists the
//! faces in that same order, which is the order they were rolled.

use crate::error::DiceError;
use crate::faces::{DiceFunction, FaceReason, FaceRequest};
use crate::item::{Face, ItemKind, ItemModifier, Roll, RollItem, Sides};
use crate::limits::DiceLimits;
use crate::rules::TermRules;
use crate::value::{DiceTerm, DiceValue};

/// Rolls every term of `value` in order, then its flat part, asking `dice` for each face.
pub fn roll(
    value: &DiceValue,
    dice: &mut dyn DiceFunction,
    limits: &DiceLimits,
) -> Result<Roll, DiceError> {
    let mut items = Vec::with_capacity(value.terms.len() + 1);
    for (index, term) in value.terms.iter().enumerate() {
        items.push(roll_term(term, index, dice, limits)?);
    }
    if value.flat != 0 {
        items.push(RollItem::flat(value.flat));
    }
    let total = items
        .iter()
        .try_fold(0i64, |sum, item| sum.checked_add(item.value));
    Ok(Roll {
        items,
        total: total.ok_or(DiceError::Overflow)?,
    })
}

/// One face as the roller tracks it.
struct Rolled {
    raw: i64,
    rerolled: bool,
    exploded: bool,
    kept: bool,
}

/// Rolls one dice term as item number `item` of its roll.
pub fn roll_term(
    term: &DiceTerm,
    item: usize,
    dice: &mut dyn DiceFunction,
    limits: &DiceLimits,
) -> Result<RollItem, DiceError> {
    if term.count > limits.max_dice_per_item {
        return Err(DiceError::SafetyLimitExceeded {
            limit: "maxDicePerItem",
            max: limits.max_dice_per_item,
        });
    }
    let rules = TermRules::new(term);
    let n = term.count as usize;
    let mut faces: Vec<Rolled> = Vec::with_capacity(n);
    let mut ask = |faces: &mut Vec<Rolled>, die: usize, reason| -> Result<usize, DiceError> {
        let request = FaceRequest {
            die: term.die,
            reason,
            item,
            die_index: die,
        };
        let raw = dice.face(&request)?;
        let (low, high) = term.die.face_range();
        if !(low..=high).contains(&raw) {
            return Err(DiceError::InvalidFace {
                die: term.die,
                face: raw,
            });
        }
        faces.push(Rolled {
            raw,
            rerolled: false,
            exploded: false,
            kept: false,
        });
        Ok(faces.len() - 1)
    };

    // `current[d]`: the face die `d` shows now.
    let mut current: Vec<usize> = Vec::with_capacity(n);
    for die in 0..n {
        current.push(ask(&mut faces, die, FaceReason::Initial)?);
    }

    if let Some(reroll) = rules.reroll {
        let mut pending: Vec<usize> = (0..n)
            .filter(|&d| reroll.at.matches(faces[current[d]].raw))
            .collect();
        if let Some(count) = reroll.count {
            // DA: "at most that many of the initial dice matching, lowest faces first (earliest
            // first among equal faces)"; the chosen dice are then rerolled in die order.
            pending.sort_by_key(|&d| (faces[current[d]].raw, d));
            pending.truncate(count as usize);
            pending.sort_unstable();
        }
        let mut rerolls = vec![0u32; n];
        while !pending.is_empty() {
            let mut again = Vec::new();
            for d in pending {
                if rerolls[d] == limits.max_rerolls {
                    return Err(DiceError::SafetyLimitExceeded {
                        limit: "maxRerolls",
                        max: limits.max_rerolls,
                    });
                }
                rerolls[d] += 1;
                faces[current[d]].rerolled = true;
                current[d] = ask(&mut faces, d, FaceReason::Reroll)?;
                if !reroll.once && reroll.at.matches(faces[current[d]].raw) {
                    again.push(d);
                }
            }
            pending = again;
        }
    }

    // `chains[d]`: die `d`'s faces that count, its final face and the faces its explosions added.
    let mut chains: Vec<Vec<usize>> = current.iter().map(|&f| vec![f]).collect();
    if let Some(explode) = rules.explode {
        let mut pending: Vec<usize> = (0..n)
            .filter(|&d| explode.at.matches(faces[current[d]].raw))
            .collect();
        let mut explosions = vec![0u32; n];
        while !pending.is_empty() {
            let mut again = Vec::new();
            for d in pending {
                if explosions[d] == limits.max_explosions {
                    return Err(DiceError::SafetyLimitExceeded {
                        limit: "maxExplosions",
                        max: limits.max_explosions,
                    });
                }
                explosions[d] += 1;
                let last = *chains[d]
                    .last()
                    .expect("a chain starts with its die's face");
                faces[last].exploded = true;
                let added = ask(&mut faces, d, FaceReason::Explosion)?;
                chains[d].push(added);
                if explode.at.matches(faces[added].raw) {
                    again.push(d);
                }
            }
            pending = again;
        }
    }

    // The dice keep and drop choose among: one per chain, or with `!` one per face of a chain.
    let units: Vec<Vec<usize>> = if rules.separate_explosions() {
        chains.iter().flatten().map(|&f| vec![f]).collect()
    } else {
        chains
    };
    // A minimum near `i64::MAX` could overflow a sum: checked, as the total is.
    let unit_values = units
        .iter()
        .map(|u| {
            u.iter()
                .try_fold(0i64, |sum, &f| sum.checked_add(rules.clamp(faces[f].raw)))
        })
        .collect::<Option<Vec<i64>>>()
        .ok_or(DiceError::Overflow)?;
    let mut order: Vec<usize> = (0..units.len()).collect();
    // Among equal values the earlier die ranks lower.
    order.sort_by_key(|&u| (unit_values[u], u));
    let (lo, hi) = rules.kept_ranks(units.len());
    let mut value = 0i64;
    for &u in &order[lo..hi] {
        for &f in &units[u] {
            faces[f].kept = true;
        }
        let counted = if rules.counts() {
            rules.score(unit_values[u])
        } else {
            unit_values[u]
        };
        value = value.checked_add(counted).ok_or(DiceError::Overflow)?;
    }

    Ok(RollItem {
        kind: ItemKind::Dice,
        count: Some(term.count),
        sides: Some(Sides::from(term.die)),
        modifiers: Some(term.modifiers.iter().map(ItemModifier::from).collect()),
        faces: Some(
            faces
                .iter()
                .map(|f| Face {
                    value: rules.clamp(f.raw),
                    kept: f.kept,
                    rerolled: f.rerolled,
                    exploded: f.exploded,
                    set: false,
                    source: None,
                })
                .collect(),
        ),
        value: if term.negative { -value } else { value },
        ..RollItem::flat(0)
    })
}
