//! Building the roll, what the roll effects do, stacked (EA "Building the roll" 2, "by stack key as
//! in the sheet"): `set` effects replacing parts (2a), `add` effects grouped with the parts'
//! carried instances and reduced by their key's policy, and the modifiers, bounds and tallies
//! each stacked by key.

use ocf_dice::DiceValue;
use ocf_dice::RollItem;
use ocf_dice::item::ItemSource;
use ocf_formula::Value;
use ocf_model::{EffectValue, Op, RollModifierKind, Target};

use super::items::{
    Carried, Counted, Counting, Item, Part, arg, dice_items, int_of, items_of, single_field, source,
};
use super::parts::carried_of;
use crate::error::ActionError;
use crate::run::{Run, eval_tags};

/// Step 2a, replaced parts: for each part, of the counted `set` effects whose `parts` tags match
/// its tags, the one `settings.competing.recommend` names (default `highest`, by value) replaces
/// the part's items with its value's items, its first listing the replaced ones in `replaces`.
pub(super) fn replace_parts(
    run: &Run<'_, '_>,
    counted: &[Counted<'_>],
    parts: &[Part],
    items: &mut Vec<Item>,
    carried: &mut Vec<Carried>,
) -> Result<(), ActionError> {
    let settings = &run.ruleset.settings;
    for (p, part) in parts.iter().enumerate() {
        let mut best: Option<(DiceValue, ItemSource, Option<String>)> = None;
        for c in counted {
            let Target::Rolls {
                parts: Some(targets),
                tally: None,
                ..
            } = &c.effect.target
            else {
                continue;
            };
            if c.effect.op != Op::Set
                || !targets.iter().any(|t| {
                    part.tags
                        .iter()
                        .any(|s| ocf_model::tag_matches(t.as_str(), s))
                })
            {
                continue;
            }
            let Some(EffectValue::Formula(f)) = &c.effect.value else {
                continue;
            };
            let dv = dice_items(&c.ctx.eval(f.as_str())?, "a set effect")?;
            let field = single_field(&c.ctx, f.as_str());
            let lowest = settings
                .competing
                .as_ref()
                .and_then(|c| c.recommend)
                .is_some_and(|r| r == ocf_model::Recommend::Lowest);
            let better = match &best {
                None => true,
                Some((b, _, _)) if lowest => dv.doubled_average() < b.doubled_average(),
                Some((b, _, _)) => dv.doubled_average() > b.doubled_average(),
            };
            if better {
                best = Some((dv, c.source.clone(), field));
            }
        }
        if let Some((dv, effect_source, field)) = best {
            // The replaced items' carried instances go with them; a single field reference's
            // come in (it is the new item's source).
            carried.retain(|k| k.part != p);
            let src = match &field {
                Some(f) => {
                    carried.extend(carried_of(run, f, p));
                    source("field", f)
                }
                None => effect_source,
            };
            let first = items.iter().position(|i| i.part == Some(p));
            let replaced: Vec<RollItem> = items
                .iter()
                .filter(|i| i.part == Some(p))
                .map(|i| (*i.item).clone())
                .collect();
            items.retain(|i| i.part != Some(p));
            let mut new = items_of(&dv, &src, &part.tags, part.multiplied);
            for i in &mut new {
                i.part = Some(p);
            }
            if let Some(n) = new.first_mut() {
                n.item.replaces = Some(replaced);
            }
            let at_pos = first.unwrap_or(items.len()).min(items.len());
            items.splice(at_pos..at_pos, new);
        }
    }

    Ok(())
}

/// `add` roll effects: each key some `add` effect has groups those effects with the parts'
/// carried instances of that key, reduced by the key's policy; each counted effect adds its items,
/// and a carried instance that doesn't count any more comes off its part's item (`dropped`).
pub(super) fn add_effects(
    run: &Run<'_, '_>,
    counted: &[Counted<'_>],
    carried: &[Carried],
    items: &mut Vec<Item>,
) -> Result<(), ActionError> {
    let settings = &run.ruleset.settings;
    let mut adds: Vec<(usize, DiceValue)> = Vec::new();
    for (i, c) in counted.iter().enumerate() {
        let Target::Rolls { tally: None, .. } = &c.effect.target else {
            continue;
        };
        if c.effect.op != Op::Add {
            continue;
        }
        let Some(EffectValue::Formula(f)) = &c.effect.value else {
            continue;
        };
        let dv = dice_items(&c.ctx.eval(f.as_str())?, "an add effect")?;
        adds.push((i, dv));
    }
    // Each key some `add` roll effect has groups those effects with every part's carried
    // instances of that key, in instance order (situational choices' effects last); the key's
    // policy reduces it as on the sheet. Carried instances of other keys stay untouched.
    let add_keys: Vec<String> = adds
        .iter()
        .filter_map(|(i, _)| {
            let c = &counted[*i];
            let key = c.effect.stack_key.as_deref()?;
            Some(group_key(key, c.source.id.as_deref().unwrap_or_default()))
        })
        .collect();
    let grouped: Vec<usize> = carried
        .iter()
        .enumerate()
        .filter(|(_, k)| add_keys.contains(&group_key(&k.key, &k.source_id)))
        .map(|(m, _)| m)
        .collect();
    let members: Vec<Member<'_, i128>> = adds
        .iter()
        .map(|(i, dv)| {
            let c = &counted[*i];
            Member {
                key: c.effect.stack_key.as_deref(),
                source: c.source.id.as_deref().unwrap_or_default(),
                order: c.order,
                value: dv.doubled_average(),
            }
        })
        .chain(grouped.iter().map(|&m| {
            let k = &carried[m];
            Member {
                key: Some(k.key.as_str()),
                source: k.source_id.as_str(),
                order: k.order,
                value: i128::from(k.value) * 2,
            }
        }))
        .collect();
    let counts = stacked(settings, &members);
    let mut kept_adds: Vec<usize> = (0..adds.len()).filter(|&n| counts[n]).collect();
    let lost: Vec<usize> = grouped
        .iter()
        .enumerate()
        .filter(|(g, _)| !counts[adds.len() + g])
        .map(|(_, &m)| m)
        .collect();
    kept_adds.sort_unstable();
    // A carried instance that doesn't count any more comes off its part's item.
    for m in lost {
        let k = &carried[m];
        if let Some(item) = items
            .iter_mut()
            .find(|i| i.part == Some(k.part) && i.term.is_none())
        {
            item.item.value -= k.value;
            item.item
                .dropped
                .get_or_insert_with(Vec::new)
                .push(ocf_dice::item::DroppedInstance {
                    source: k.source.clone(),
                    value: k.value,
                });
        }
    }
    for n in kept_adds {
        let (i, dv) = &adds[n];
        let c = &counted[*i];
        let mut effect_tags = Vec::new();
        eval_tags(&c.ctx, run.ruleset, &c.effect.tags, &mut effect_tags)?;
        let effect_tags: super::items::Tags = effect_tags.into();
        items.extend(items_of(
            dv,
            &c.source,
            &effect_tags,
            c.effect.multiplied != Some(false),
        ));
    }

    Ok(())
}

/// The counted roll modifiers, bounds (op, value, source, in effect order) and tallies (name,
/// op, value): modifiers stacked per kind, bounds per op, tallies per tally and op.
#[allow(clippy::type_complexity)]
pub(super) fn sorted_out<'c, 'db>(
    settings: &ocf_model::Settings,
    counted: &'c [Counted<'db>],
) -> Result<
    (
        Vec<Counting<'c, 'db>>,
        Vec<(Op, i64, ItemSource)>,
        Vec<(String, Op, i64)>,
    ),
    ActionError,
> {
    // Roll modifiers, bounds and tallies, each stacked by key and policy: modifiers per kind
    // (compared by `factor`, `steps` or `count`), bounds per op (EF "Bounds on a roll's total":
    // "stacking applies per op"), tallies per tally and op (EA "Roll tallies").
    let number = |v: &Option<Value>| -> i128 {
        v.as_ref()
            .and_then(Value::as_millionths)
            .map_or(0, |m| m.get())
    };
    let mut modifiers: Vec<(&Counted<'db>, &ocf_model::RollModifier, i128)> = Vec::new();
    let mut bounds = Vec::new();
    let mut tallies = Vec::new();
    for c in counted {
        let Target::Rolls {
            tally,
            parts: set_parts,
            ..
        } = &c.effect.target
        else {
            continue;
        };
        match (&c.effect.op, &c.effect.value, tally) {
            (Op::RollModifier, Some(EffectValue::RollModifier(m)), None) => {
                modifiers.push((c, m, number(&arg(c, m))))
            }
            (Op::AtLeast | Op::AtMost, Some(EffectValue::Formula(f)), None) => {
                let v = int_of(&c.ctx.eval(f.as_str())?)?;
                bounds.push((c, v));
            }
            (Op::Add | Op::AtLeast | Op::AtMost, Some(EffectValue::Formula(f)), Some(name)) => {
                let v = int_of(&c.ctx.eval(f.as_str())?)?;
                tallies.push((c, name.clone(), v));
            }
            (Op::Set, _, None) if set_parts.is_some() => {}
            _ => {}
        }
    }
    let mut kept_mods = vec![false; modifiers.len()];
    let mut kinds: Vec<RollModifierKind> = Vec::new();
    for (_, m, _) in &modifiers {
        if !kinds.contains(&m.kind) {
            kinds.push(m.kind);
        }
    }
    for kind in kinds {
        let of_kind: Vec<usize> = (0..modifiers.len())
            .filter(|&n| modifiers[n].1.kind == kind)
            .collect();
        let members: Vec<Member<'_, i128>> = of_kind
            .iter()
            .map(|&n| member(modifiers[n].0, modifiers[n].2))
            .collect();
        for (g, counts) in stacked(settings, &members).into_iter().enumerate() {
            kept_mods[of_kind[g]] = counts;
        }
    }
    let modifiers: Vec<(&Counted<'db>, &ocf_model::RollModifier, i128)> = modifiers
        .into_iter()
        .zip(kept_mods)
        .filter_map(|(m, k)| k.then_some(m))
        .collect();
    let mut kept_bounds = Vec::new();
    for op in [Op::AtLeast, Op::AtMost] {
        let of_op: Vec<&(&Counted<'db>, i64)> =
            bounds.iter().filter(|(c, _)| c.effect.op == op).collect();
        let members: Vec<Member<'_, i128>> = of_op
            .iter()
            .map(|(c, v)| member(c, i128::from(*v)))
            .collect();
        for ((c, v), counts) in of_op.into_iter().zip(stacked(settings, &members)) {
            if counts {
                kept_bounds.push((c.order, op, *v, c.source.clone()));
            }
        }
    }
    kept_bounds.sort_by_key(|b| b.0);
    let bounds: Vec<(Op, i64, ItemSource)> = kept_bounds
        .into_iter()
        .map(|(_, op, v, src)| (op, v, src))
        .collect();
    let mut kept_tallies = vec![false; tallies.len()];
    let mut seen: Vec<(&str, Op)> = Vec::new();
    for (c, name, _) in &tallies {
        if seen.contains(&(name.as_str(), c.effect.op)) {
            continue;
        }
        seen.push((name.as_str(), c.effect.op));
        let group: Vec<usize> = (0..tallies.len())
            .filter(|&t| tallies[t].1 == *name && tallies[t].0.effect.op == c.effect.op)
            .collect();
        let members: Vec<Member<'_, i128>> = group
            .iter()
            .map(|&t| member(tallies[t].0, i128::from(tallies[t].2)))
            .collect();
        for (g, counts) in stacked(settings, &members).into_iter().enumerate() {
            kept_tallies[group[g]] = counts;
        }
    }
    let tallies: Vec<(String, Op, i64)> = tallies
        .iter()
        .zip(kept_tallies)
        .filter(|(_, k)| *k)
        .map(|((c, name, v), _)| (name.clone(), c.effect.op, *v))
        .collect();
    Ok((modifiers, bounds, tallies))
}

/// A stack key as grouped: `source` groups each source apart.
pub(super) fn group_key(written: &str, source_id: &str) -> String {
    if written == "source" {
        format!("source={source_id}")
    } else {
        written.to_owned()
    }
}

/// A member of a roll's stacking group: its key as written, its source ID, instance order and the
/// value it compares by.
pub(super) struct Member<'k, V> {
    pub key: Option<&'k str>,
    pub source: &'k str,
    pub order: usize,
    pub value: V,
}

/// A counted roll effect as a stacking member, comparing by `value`.
pub(super) fn member<'k>(c: &'k Counted<'_>, value: i128) -> Member<'k, i128> {
    Member {
        key: c.effect.stack_key.as_deref(),
        source: c.source.id.as_deref().unwrap_or_default(),
        order: c.order,
        value,
    }
}

/// Which `members` count, stacked by key and policy as the sheet stacks (EA "Building the roll" 2,
/// "by stack key as in the sheet"), each group in instance order.
pub(super) fn stacked<V: PartialOrd>(
    settings: &ocf_model::Settings,
    members: &[Member<'_, V>],
) -> Vec<bool> {
    let mut by_order: Vec<usize> = (0..members.len()).collect();
    by_order.sort_by_key(|&m| members[m].order);
    let counts = ocf_engine::effects::stack_counts(
        settings,
        by_order
            .iter()
            .map(|&m| (members[m].key, members[m].source)),
        |a, b| {
            members[by_order[a]]
                .value
                .partial_cmp(&members[by_order[b]].value)
                .unwrap_or(std::cmp::Ordering::Equal)
        },
    );
    let mut out = vec![true; members.len()];
    for (n, &m) in by_order.iter().enumerate() {
        out[m] = counts[n];
    }
    out
}
