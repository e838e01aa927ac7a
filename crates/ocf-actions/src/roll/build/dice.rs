//! Building the roll, the dice (EA "Building the roll" 2b–8; DA "Roll modifiers", "Pool dice"):
//! die steps, pool dice, empty pools, advantage and disadvantage, multiplied dice, rerolls,
//! minimum faces and explosions, given faces, in that order, each on the items the step before
//! left; then the counted `multiply` factors, for the roll.

use ocf_dice::Modifier;
use ocf_dice::item::ItemSource;
use ocf_model::{Advantage, RollModifierKind, Target};
use ocf_syntax::dice::{Compare, CompareOp, Die};

use super::items::{Counted, Counting, Factor, Item, Part, arg_int, int_of, items_of};
use crate::error::ActionError;

/// Whether a counted modifier reaches `item`: it names no `parts`, or the item's part has a tag
/// it names.
fn part_matches(c: &Counted<'_>, item: &Item, parts: &[Part]) -> bool {
    let Target::Rolls {
        parts: Some(targets),
        ..
    } = &c.effect.target
    else {
        return true;
    };
    item.part.is_some_and(|p| {
        targets.iter().any(|t| {
            parts[p]
                .tags
                .iter()
                .any(|s| ocf_model::tag_matches(t.as_str(), s))
        })
    })
}

/// Step 2b, die steps: each dice item from a part moves along d4 … d12 by the sum of the counted
/// `stepDie` modifiers that reach it, stopping at the ends; other sizes stay.
pub(super) fn die_steps(modifiers: &[Counting<'_, '_>], parts: &[Part], items: &mut [Item]) {
    for item in items.iter_mut().filter(|i| i.part.is_some()) {
        let mut steps = 0i64;
        for (c, m, _) in modifiers {
            if m.kind == RollModifierKind::StepDie && part_matches(c, item, parts) {
                steps += arg_int(c, m);
            }
        }
        let Some(term) = &mut item.term else { continue };
        if steps != 0
            && let Die::Sides(s) = term.die
            && let Some(pos) = [4u32, 6, 8, 10, 12].iter().position(|&x| x == s)
        {
            let to = (pos as i64 + steps).clamp(0, 4) as usize;
            let new = [4u32, 6, 8, 10, 12][to];
            if new != s {
                term.die = Die::Sides(new);
                item.item.sides = Some(term.die.into());
                item.item.stepped_from = Some(s);
            }
        }
    }
}

/// Step 3, pool dice: each `poolDice` adds `count` dice to its part's first dice item (the part
/// named by `part`, else the first dice part), each added die recording the effect as its face
/// `source`.
pub(super) fn pool_dice(modifiers: &[Counting<'_, '_>], parts: &[Part], items: &mut [Item]) {
    for (c, m, _) in modifiers {
        if m.kind != RollModifierKind::PoolDice {
            continue;
        }
        let count = arg_int(c, m).max(0) as u32;
        let part = match &m.part {
            Some(tag) => parts
                .iter()
                .position(|p| p.tags.iter().any(|t| **t == **tag)),
            None => parts.iter().position(|p| p.is_dice),
        };
        let Some(part) = part else { continue };
        if let Some(item) = items
            .iter_mut()
            .find(|i| i.part == Some(part) && i.term.is_some())
        {
            let term = item.term.as_mut().expect("a dice item");
            let before = term.count;
            term.count = term.count.saturating_add(count);
            item.item.count = Some(term.count);
            let pool = item.pool.get_or_insert((before, Vec::new()));
            pool.1.extend((0..count).map(|_| c.source.clone()));
        }
    }
}

/// Step 4, empty pools: a dice part whose first dice item has 0 dice takes its `ifEmpty` dice;
/// whether one did (`empty`).
pub(super) fn empty_pools(
    parts: &[Part],
    items: &mut Vec<Item>,
    default_source: &ItemSource,
) -> bool {
    let mut empty = false;
    for (p, part) in parts.iter().enumerate() {
        let Some(if_empty) = &part.if_empty else {
            continue;
        };
        let Some(pos) = items
            .iter()
            .position(|i| i.part == Some(p) && i.term.is_some())
        else {
            continue;
        };
        if items[pos].term.as_ref().is_some_and(|t| t.count == 0) {
            let src = items[pos]
                .item
                .source
                .clone()
                .unwrap_or(default_source.clone());
            let mut new = items_of(if_empty, &src, &part.tags, part.multiplied);
            for i in &mut new {
                i.part = Some(p);
            }
            items.splice(pos..pos + 1, new);
            empty = true;
        }
    }
    empty
}

/// Step 5, advantage and disadvantage, counted by source and applied by
/// `settings.rollModifiers.advantage`, on the main dice item; every source, for the log.
pub(super) fn advantage(
    settings: &ocf_model::Settings,
    step: &ocf_model::Step,
    modifiers: &[Counting<'_, '_>],
    items: &mut [Item],
) -> Result<Vec<(String, ItemSource)>, ActionError> {
    let mut adv = 0usize;
    let mut dis = 0usize;
    let mut no_adv = false;
    let mut no_dis = false;
    let mut advantage = Vec::new();
    for (c, m, _) in modifiers {
        match m.kind {
            RollModifierKind::Advantage => {
                adv += 1;
                advantage.push(("advantage".to_owned(), c.source.clone()));
            }
            RollModifierKind::Disadvantage => {
                dis += 1;
                advantage.push(("disadvantage".to_owned(), c.source.clone()));
            }
            RollModifierKind::NoAdvantage => no_adv = true,
            RollModifierKind::NoDisadvantage => no_dis = true,
            _ => {}
        }
    }
    if no_adv {
        adv = 0;
    }
    if no_dis {
        dis = 0;
    }
    let mode = settings
        .roll_modifiers
        .as_ref()
        .and_then(|r| r.advantage)
        .unwrap_or(Advantage::Cancel);
    let (kind_adv, extra) = match mode {
        Advantage::Cancel => match (adv > 0, dis > 0) {
            (true, false) => (true, 1),
            (false, true) => (false, 1),
            _ => (true, 0),
        },
        Advantage::Net => (adv >= dis, adv.abs_diff(dis)),
        Advantage::Stack => {
            if adv > 0 && dis > 0 {
                return Err(ActionError::new(
                    "conflicting-roll-modifiers",
                    "advantage and disadvantage together, under `stack`",
                ));
            }
            (adv > 0, adv + dis)
        }
    };
    let better_low = step.better == Some(ocf_model::Better::Low);
    if extra > 0
        && let Some(main) = items.iter_mut().find(|i| i.term.is_some())
    {
        let term = main.term.as_mut().expect("a dice item");
        let has_keep = term.modifiers.iter().any(|m| {
            matches!(
                m,
                Modifier::KeepHighest(_)
                    | Modifier::KeepLowest(_)
                    | Modifier::DropHighest(_)
                    | Modifier::DropLowest(_)
            )
        });
        let before = term.count;
        term.count = term.count.saturating_add(extra as u32);
        if !has_keep {
            let high = kind_adv != better_low;
            term.modifiers.push(if high {
                Modifier::KeepHighest(before)
            } else {
                Modifier::KeepLowest(before)
            });
        }
        main.item.count = Some(term.count);
    }
    Ok(advantage)
}

/// Step 6, multiplied dice: each `multiplyDice` multiplies the count of every dice item not marked
/// `multiplied: false`.
pub(super) fn multiply_dice(modifiers: &[Counting<'_, '_>], items: &mut [Item]) {
    for (c, m, _) in modifiers {
        if m.kind != RollModifierKind::MultiplyDice {
            continue;
        }
        let factor = arg_int(c, m).max(0) as u32;
        for item in items.iter_mut() {
            if item.item.multiplied == Some(false) {
                continue;
            }
            if let Some(term) = &mut item.term {
                term.count = term.count.saturating_mul(factor);
                item.item.count = Some(term.count);
            }
        }
    }
}

/// Step 7, rerolls, minimum faces, explosions: each adds its dice modifier to every dice item
/// without one of that type.
pub(super) fn dice_modifiers(
    modifiers: &[Counting<'_, '_>],
    items: &mut [Item],
) -> Result<(), ActionError> {
    for (c, m, _) in modifiers {
        let eval_int = |f: &Option<ocf_model::Formula>| -> Result<Option<i64>, ActionError> {
            f.as_ref()
                .map(|f| c.ctx.eval(f.as_str()).and_then(|v| int_of(&v)))
                .transpose()
        };
        let new = match m.kind {
            RollModifierKind::Reroll => {
                let below = eval_int(&m.below)?.unwrap_or(1);
                let count = eval_int(&m.count)?.map(|n| n.max(0) as u32);
                let at = Compare {
                    op: CompareOp::Le,
                    value: below,
                };
                Some(if m.once == Some(true) {
                    Modifier::RerollOnce { at, count }
                } else {
                    Modifier::Reroll { at, count }
                })
            }
            RollModifierKind::MinimumFace => {
                Some(Modifier::Minimum(eval_int(&m.value)?.unwrap_or(1)))
            }
            RollModifierKind::Explode => {
                Some(Modifier::Explode(eval_int(&m.at)?.map(|v| Compare {
                    op: CompareOp::Ge,
                    value: v,
                })))
            }
            _ => None,
        };
        let Some(new) = new else { continue };
        for item in items.iter_mut() {
            if let Some(term) = &mut item.term
                && !term
                    .modifiers
                    .iter()
                    .any(|x| x.type_name() == new.type_name())
            {
                term.modifiers.push(new);
            }
        }
    }
    Ok(())
}

/// Step 8, given faces: the first counted `setFaces` on an item (the main dice item, or the first
/// dice item of a part its `parts` match) gives it its first faces; one not on the die is
/// `invalid-face`.
pub(super) fn given_faces(
    modifiers: &[Counting<'_, '_>],
    parts: &[Part],
    items: &mut [Item],
) -> Result<(), ActionError> {
    for (c, m, _) in modifiers {
        if m.kind != RollModifierKind::SetFaces {
            continue;
        }
        let target = items.iter().position(|i| {
            i.term.is_some() && (m_has_parts(c) && part_matches(c, i, parts) || !m_has_parts(c))
        });
        let Some(t) = target else { continue };
        if !items[t].given.is_empty() {
            continue;
        }
        let mut faces = Vec::new();
        for f in &m.faces {
            faces.push(int_of(&c.ctx.eval(f.as_str())?)?);
        }
        let term = items[t].term.clone().expect("a dice item");
        let (low, high) = term.die.face_range();
        faces.truncate(term.count as usize);
        if let Some(bad) = faces.iter().find(|f| **f < low || **f > high) {
            return Err(ActionError::new(
                "invalid-face",
                format!("{bad} is not a face of the die"),
            )
            .with("face", *bad));
        }
        items[t].given = faces;
    }
    Ok(())
}

/// The counted `multiply` factors, in effect order, exact and as reported, with the effect's
/// `rounding`.
pub(super) fn factors(modifiers: &[Counting<'_, '_>]) -> Result<Vec<Factor>, ActionError> {
    let mut multiply = Vec::new();
    for (c, m, _) in modifiers {
        if m.kind == RollModifierKind::Multiply
            && let Some(f) = &m.factor
        {
            let v = c.ctx.eval(f.as_str())?;
            let exact = v.as_millionths().ok_or_else(|| {
                ActionError::new(
                    "type-mismatch",
                    format!("a multiply factor is a {}, not a number", v.type_name()),
                )
            })?;
            multiply.push(Factor {
                exact,
                reported: v.to_json().as_f64().unwrap_or(1.0),
                rounding: c.effect.rounding,
            });
        }
    }
    Ok(multiply)
}

fn m_has_parts(c: &Counted<'_>) -> bool {
    matches!(&c.effect.target, Target::Rolls { parts: Some(_), .. })
}
