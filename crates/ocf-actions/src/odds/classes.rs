//! A roll step's outcome classes: instead of rolling, the built roll (as startAction builds it) is
//! split into classes that what reads the roll can't tell apart, each with its exact probability
//! from `ocf-dice`, and the run goes on with the class the branching picks.
//!
//! - Each dice item's value follows its term's exact distribution (rerolls, explosions, keep and
//!   drop included: `ocf_dice::distribution`). When the roll's faces are read (a band's
//!   `roll.kept`, `roll.faces`, a later `steps.<id>.faces`), a term without rerolls or explosions is
//!   split by the multiset of its faces (each with its multinomial weight) and rolled from those
//!   faces by `ocf_dice::roll_term`, so keep, drop and counting are the roller's own; a single
//!   rerolled or exploding die is rolled from faces found for each value.
//! - Items are combined by product, classes merged where every group of items with the same tags
//!   (what `split` divides by) adds up the same after `multiply`: convolutions where totals add.
//! - When nothing after the step reads more than its `band` (`steps.<id>.band`), classes with the
//!   same band are one: a save against a DC has two classes, whatever the bonus.

use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::One;
use ocf_dice::{DiceError, DiceFunction, DiceLimits, DiceTerm, FaceReason, FaceRequest};
use ocf_dice::{Modifier, RollItem};

use crate::branching::{MAX_CLASSES, Memo, dice_error, too_large};
use crate::error::ActionError;
use crate::roll::build::Built;
use crate::roll::classify;
use crate::roll::rolling::{self, Rolled};
use crate::run::{Frame, Run, StepAt, Stop};

/// What the rest of the action reads of one roll step's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reads {
    /// Only its `band` (or whether it exists): classes with one band are one.
    pub band_only: bool,
    /// Its faces (`faces`, `kept`, `items`, or the whole result through `of`).
    pub faces: bool,
}

/// Whether `text` at `at` continues an identifier (so `steps.attack` doesn't match `steps.attackBonus`).
fn continues(text: &str, at: usize) -> bool {
    text[at..]
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// What `action` (its definition as JSON text) reads of step `id`'s result after the step.
pub(crate) fn reads(action: &str, id: &str, band_texts: &[&str]) -> Reads {
    let mut band_only = true;
    let mut faces = band_texts.iter().any(|t| {
        ["roll.faces", "roll.kept", "roll.items"]
            .iter()
            .any(|m| t.contains(m))
    });
    let needle = format!("steps.{id}");
    let mut from = 0;
    while let Some(found) = action[from..].find(&needle) {
        let end = from + found + needle.len();
        from = end;
        if continues(action, end) {
            continue;
        }
        let rest = &action[end..];
        if let Some(member) = rest.strip_prefix('.') {
            let name: String = member
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            match name.as_str() {
                "band" | "bandSet" => {}
                "faces" | "kept" | "items" => {
                    band_only = false;
                    faces = true;
                }
                _ => band_only = false,
            }
        } else if !rest.starts_with(')') {
            // `steps.damage` as a whole (passed on, compared): anything may be read.
            band_only = false;
            faces = true;
        }
    }
    // `split: { roll: id }` reads the items' values and tags; `of: id` classifies it again.
    for key in ["roll", "of"] {
        let quoted = format!("\"{key}\":\"{id}\"");
        if action.contains(&quoted) {
            band_only = false;
            if key == "of" {
                faces = true;
            }
        }
    }
    Reads { band_only, faces }
}

/// One class of an item: its probability and the item as rolled (before `multiply`).
type ItemClass = (BigRational, RollItem);

/// Serves a fixed list of faces (a multiset's), or for one die the faces that make `target`.
struct Faces {
    list: Vec<i64>,
    next: usize,
    /// For a single rerolled or exploding die: the value to reach.
    target: Option<(i64, i64, i64)>,
    sum: i64,
}

impl DiceFunction for Faces {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        if let Some((target, low, high)) = self.target {
            let face = match request.reason {
                FaceReason::Initial | FaceReason::Reroll => {
                    let f = target.clamp(low, high);
                    self.sum = f;
                    f
                }
                _ => {
                    let f = (target - self.sum).clamp(low, high);
                    self.sum += f;
                    f
                }
            };
            return Ok(face);
        }
        let face = *self
            .list
            .get(self.next)
            .ok_or(DiceError::NoMoreFaces { request: *request })?;
        self.next += 1;
        Ok(face)
    }
}

fn simple(term: &DiceTerm) -> bool {
    !term.modifiers.iter().any(|m| {
        matches!(
            m,
            Modifier::Explode(_)
                | Modifier::ExplodeCompound(_)
                | Modifier::Reroll { .. }
                | Modifier::RerollOnce { .. }
        )
    })
}

fn unsupported(why: &str) -> ActionError {
    ActionError::new("unsupported-distribution", why.to_owned())
}

/// `n! / prod(c!)`.
fn multinomial(counts: &[u32]) -> BigInt {
    let mut result = BigInt::one();
    let mut k = 0u32;
    for &c in counts {
        for j in 1..=c {
            k += 1;
            result = result * k / j;
        }
    }
    result
}

/// The classes of one dice item.
fn item_classes(
    item: &crate::roll::build::Item,
    term: &DiceTerm,
    index: usize,
    faces: bool,
    memo: &mut Memo,
) -> Result<Vec<ItemClass>, ActionError> {
    if !item.given.is_empty() {
        return Err(unsupported(
            "a roll with faces set by an effect (`setFaces`)",
        ));
    }
    let limits = DiceLimits::default();
    let (low, high) = term.die.face_range();
    let roll_with = |f: &mut Faces| -> Result<RollItem, ActionError> {
        let rolled = ocf_dice::roll_term(term, index, f, &limits).map_err(dice_error)?;
        let mut out = (*item.item).clone();
        out.value = rolled.value;
        out.modifiers = rolled.modifiers;
        out.faces = rolled.faces;
        Ok(out)
    };
    if faces && simple(term) {
        // Every multiset of faces, with its multinomial weight over S^n.
        let s = (high - low + 1) as usize;
        let n = term.count as usize;
        let mut count = BigInt::one();
        for j in 1..=n {
            count = count * (n + s - j) / j;
        }
        if count > BigInt::from(MAX_CLASSES) {
            return Err(too_large(format!(
                "the roll's faces are read and its {} dice have {count} multisets of faces",
                term.count
            )));
        }
        let denom = num_traits::pow(BigInt::from(s), n);
        let mut out = Vec::new();
        let mut counts = vec![0u32; s];
        fn walk(
            at: usize,
            left: u32,
            counts: &mut Vec<u32>,
            visit: &mut dyn FnMut(&[u32]) -> Result<(), ActionError>,
        ) -> Result<(), ActionError> {
            if at + 1 == counts.len() {
                counts[at] = left;
                visit(counts)?;
                counts[at] = 0;
                return Ok(());
            }
            for c in (0..=left).rev() {
                counts[at] = c;
                walk(at + 1, left - c, counts, visit)?;
            }
            counts[at] = 0;
            Ok(())
        }
        walk(0, n as u32, &mut counts, &mut |counts: &[u32]| {
            // Highest faces first.
            let list: Vec<i64> = counts
                .iter()
                .enumerate()
                .rev()
                .flat_map(|(i, &c)| std::iter::repeat_n(low + i as i64, c as usize))
                .collect();
            let mut f = Faces {
                list,
                next: 0,
                target: None,
                sum: 0,
            };
            let rolled = roll_with(&mut f)?;
            out.push((BigRational::new(multinomial(counts), denom.clone()), rolled));
            Ok(())
        })?;
        return Ok(out);
    }
    let dist = memo.distribution(term)?;
    let mut out = Vec::new();
    for (&v, p) in &dist.outcomes {
        let rolled = if faces {
            if term.count != 1 {
                return Err(unsupported(
                    "the faces of a roll of several rerolled or exploding dice are read",
                ));
            }
            let mut f = Faces {
                list: Vec::new(),
                next: 0,
                target: Some((if term.negative { -v } else { v }, low, high)),
                sum: 0,
            };
            let rolled = roll_with(&mut f)?;
            if rolled.value != v {
                return Err(unsupported(
                    "the faces of a rerolled or exploding die are read, and no faces make one of its values",
                ));
            }
            rolled
        } else {
            let mut out = (*item.item).clone();
            out.value = v;
            out.faces = Some(Vec::new());
            out
        };
        out.push((p.clone(), rolled));
    }
    Ok(out)
}

/// The key classes merge by: each tag group's sum after `multiply`.
fn key_of(
    items: &[RollItem],
    built: &Built<'_>,
    rounding: ocf_model::Rounding,
) -> Result<Vec<(String, i64)>, Stop> {
    let mut groups: BTreeMap<String, i64> = BTreeMap::new();
    for item in items {
        let mut m = item.clone();
        rolling::multiply(&mut m, built, rounding)?;
        let tags = serde_json::to_string(&m.tags).unwrap_or_default();
        let slot = groups.entry(tags).or_default();
        *slot = slot.saturating_add(m.value);
    }
    Ok(groups.into_iter().collect())
}

/// The roll step's result for the class the branching picks (in place of `rolling::roll`).
pub(crate) fn roll<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    built: &Built<'_>,
    bands: Option<&str>,
    rounding: ocf_model::Rounding,
) -> Result<Rolled, Stop> {
    let band_set = bands.and_then(|b| classify::band_set(run.ruleset, frame.pack, b));
    let mut band_texts: Vec<&str> = Vec::new();
    if let Some((_, set)) = &band_set {
        band_texts.extend(set.decl.bands.iter().map(|b| b.when.as_str()));
        band_texts.extend(set.decl.value.iter().map(|v| v.as_str()));
    }
    let branch = run
        .checkpoints
        .odds
        .as_deref_mut()
        .expect("odds::classes::roll runs with a branching");
    let memo = branch.memo();
    let text = memo.action_text(&frame.id, frame.def);
    let reads = reads(&text, &at.step.id, &band_texts);
    // The product of the items' classes, merged by key unless faces are read.
    let mut classes: Vec<(BigRational, Vec<RollItem>)> = vec![(BigRational::one(), Vec::new())];
    for (index, item) in built.items.iter().enumerate() {
        let item_classes: Vec<ItemClass> = match &item.term {
            None => vec![(BigRational::one(), (*item.item).clone())],
            Some(term) => item_classes(item, term, index, reads.faces, memo)?,
        };
        let mut next: Vec<(BigRational, Vec<RollItem>)> = Vec::new();
        let mut by_key: BTreeMap<Vec<(String, i64)>, usize> = BTreeMap::new();
        for (p, items) in &classes {
            for (q, it) in &item_classes {
                let mut items = items.clone();
                items.push(it.clone());
                let prob = p * q;
                if !reads.faces {
                    let key = key_of(&items, built, rounding)?;
                    if let Some(&at) = by_key.get(&key) {
                        next[at].0 += prob;
                        continue;
                    }
                    by_key.insert(key, next.len());
                }
                next.push((prob, items));
                if next.len() > MAX_CLASSES {
                    return Err(Stop::Fail(too_large(format!(
                        "the roll at `{}` has more than {MAX_CLASSES} outcome classes",
                        at.path
                    ))));
                }
            }
        }
        classes = next;
    }
    let tallies = classify::tallies(run.ruleset, built);
    let mut rolled: Vec<(BigRational, Rolled)> = classes
        .into_iter()
        .map(|(p, items)| {
            let mut r = rolling::finish(items, built, rounding, Vec::new(), "engine")?;
            r.tallies = tallies.clone();
            Ok((p, r))
        })
        .collect::<Result<_, Stop>>()?;
    rolled.sort_by_key(|(_, r)| r.total);
    if reads.band_only && bands.is_some() {
        // One class per band: the first of its classes stands for them all.
        let mut ctx = run.ctx(frame, Some(at));
        let mut merged: Vec<(BigRational, Rolled)> = Vec::new();
        let mut seen: Vec<Option<String>> = Vec::new();
        for (p, r) in rolled {
            let value = classify::result_value(&r, built.empty);
            let result = classify::classify(run.ruleset, frame.pack, bands, &mut ctx, value)?;
            let band = crate::context::member(&result, "band").map(|b| b.to_json().to_string());
            match seen.iter().position(|b| *b == band) {
                Some(i) => merged[i].0 += p,
                None => {
                    seen.push(band);
                    merged.push((p, r));
                }
            }
        }
        rolled = merged;
    }
    let probabilities: Vec<BigRational> = rolled.iter().map(|(p, _)| p.clone()).collect();
    let branch = run
        .checkpoints
        .odds
        .as_deref_mut()
        .expect("odds::classes::roll runs with a branching");
    let i = branch.choose(&probabilities, &at.path)?;
    Ok(rolled.swap_remove(i).1)
}
