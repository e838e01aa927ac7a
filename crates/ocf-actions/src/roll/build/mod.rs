//! Building the roll (EA "Building the roll" 1–8; DA "Roll modifiers", "Pool dice"): parts become
//! items, roll effects add items, modify dice and bound the total, `set` replaces parts; then die
//! steps, pool dice, empty pools, advantage, multiplied dice, rerolls and given faces, in order.
//!
//! Over 800 lines: [`build`] is one routine that walks the chapter's eight steps in order over
//! one set of running lists (items, factors, counted effects), each step reading what the ones
//! before it left; split by those steps is left for a later pass (issue 46).

use ocf_dice::item::ItemSource;
use ocf_dice::{DiceTerm, DiceValue, ItemKind, Modifier, RollItem};

use ocf_formula::Value;
use ocf_model::{Advantage, Effect, EffectValue, Op, RollModifierKind, Target};
use ocf_syntax::dice::{Compare, CompareOp, Die};

use crate::context::ActionContext;
use crate::error::ActionError;
use crate::run::{Frame, Run, StepAt, eval_tags};

mod effects;
mod parts;
mod stacking;

use effects::bind_roll_view;
pub use effects::instance_ctx;
use parts::carried_of;
use stacking::{Member, group_key, member, stacked};

/// One roll item being built.
#[derive(Debug, Clone)]
pub struct Item {
    pub item: RollItem,
    /// A dice item's dice, as they will be rolled.
    pub term: Option<DiceTerm>,
    /// The part it came from (`None`: added by an effect).
    pub part: Option<usize>,
    /// Faces given by `setFaces`, rolled first.
    pub given: Vec<i64>,
    /// Pool dice added: how many initial dice the item had before, and each added die's source.
    pub pool: Option<(u32, Vec<ItemSource>)>,
}

/// One part as built.
#[derive(Debug, Clone)]
pub struct Part {
    pub tags: Vec<String>,
    pub multiplied: bool,
    pub if_empty: Option<DiceValue>,
    pub is_dice: bool,
}

/// A field instance a part carries (EA "Building the roll" 1): an `add` with a `stackKey` that
/// counted on the sheet, kept for the roll's stacking in step 2.
#[derive(Debug, Clone)]
pub struct Carried {
    pub part: usize,
    /// The key as written (`source` is each source's own group).
    pub key: String,
    /// The instance's source ID, which a `source` key groups by.
    pub source_id: String,
    pub value: i64,
    pub source: ItemSource,
    /// Instance order, for the group's order with the roll's own effects.
    pub order: usize,
}

/// A counted roll effect, with its source and the context its formulas see.
pub struct Counted<'a> {
    pub effect: &'a Effect,
    pub source: ItemSource,
    pub ctx: ActionContext<'a>,
    /// Instance order; situational choices' effects come after every instance.
    pub order: usize,
}

/// A counted `multiply` roll modifier: its factor, exact and as reported, and the effect's own
/// `rounding` (EA "Rolling", Multiply: "by the effect's `rounding`, else `settings.rounding`").
pub struct Factor {
    pub exact: ocf_formula::decimal::Millionths,
    pub reported: f64,
    pub rounding: Option<ocf_model::Rounding>,
}

pub struct Built<'a> {
    pub items: Vec<Item>,
    pub parts: Vec<Part>,
    pub tags: Vec<String>,
    pub empty: bool,
    /// `multiply` factors in effect order.
    pub multiply: Vec<Factor>,
    /// Counted `atLeast` / `atMost` effects on the total: op, value, source.
    pub bounds: Vec<(Op, i64, ItemSource)>,
    /// Roll tally effects: tally name, op, value.
    pub tallies: Vec<(String, Op, i64)>,
    /// Every advantage and disadvantage source, cancelled ones included, for the log.
    pub advantage: Vec<(String, ItemSource)>,
    pub _marker: std::marker::PhantomData<&'a ()>,
}

fn source(kind: &str, id: &str) -> ItemSource {
    ItemSource {
        kind: kind.to_owned(),
        id: Some(id.to_owned()),
    }
}

fn dice_items(value: &Value, what: &str) -> Result<DiceValue, ActionError> {
    match value {
        Value::Dice(d) => Ok((**d).clone()),
        Value::Int(n) => Ok(DiceValue::flat(*n)),
        Value::Decimal(d) => Ok(DiceValue::flat(d.floor())),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("{what} gives a {}, not dice or a number", other.type_name()),
        )),
    }
}

fn new_dice_item(term: &DiceTerm, src: &ItemSource, tags: &[String], multiplied: bool) -> Item {
    let mut item = RollItem::flat(0);
    item.kind = ItemKind::Dice;
    item.count = Some(term.count);
    item.sides = Some(term.die.into());
    item.source = Some(src.clone());
    item.tags = (!tags.is_empty()).then(|| tags.to_vec());
    item.multiplied = (!multiplied).then_some(false);
    Item {
        item,
        term: Some(term.clone()),
        part: None,
        given: Vec::new(),
        pool: None,
    }
}

fn new_flat_item(value: i64, src: &ItemSource, tags: &[String], multiplied: bool) -> Item {
    let mut item = RollItem::flat(value);
    item.source = Some(src.clone());
    item.tags = (!tags.is_empty()).then(|| tags.to_vec());
    item.multiplied = (!multiplied).then_some(false);
    Item {
        item,
        term: None,
        part: None,
        given: Vec::new(),
        pool: None,
    }
}

/// The items of a dice value: one per term, then its flat part when non-zero.
fn items_of(dice: &DiceValue, src: &ItemSource, tags: &[String], multiplied: bool) -> Vec<Item> {
    let mut out: Vec<Item> = dice
        .terms
        .iter()
        .map(|t| new_dice_item(t, src, tags, multiplied))
        .collect();
    if dice.flat != 0 {
        out.push(new_flat_item(dice.flat, src, tags, multiplied));
    }
    out
}

/// The field a formula names when it is a single field reference (`abilities.str.mod`).
fn single_field(ctx: &ActionContext<'_>, text: &str) -> Option<String> {
    let t = text.trim();
    let plain = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' || c == ':')
        && t.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if !plain || ocf_formula::Root::from_name(t.split('.').next().unwrap_or("")).is_some() {
        return None;
    }
    ctx.sheet.resolve(t).map(|field| field.to_string())
}

pub fn build<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    tags: Vec<String>,
) -> Result<Built<'db>, ActionError> {
    let step = at.step;
    let ctx = run.ctx(frame, Some(at));
    let default_source = match &frame.item {
        Some(_) => ctx
            .item_value()
            .and_then(|v| match crate::context::member(&v, "id") {
                Some(Value::String(s)) => Some(source("item", s)),
                _ => None,
            })
            .unwrap_or_else(|| source("rules", frame.pack)),
        None => source("rules", frame.pack),
    };
    // 1. Parts.
    let mut items: Vec<Item> = Vec::new();
    let mut parts: Vec<Part> = Vec::new();
    let mut carried: Vec<Carried> = Vec::new();
    for part in &step.parts {
        let index = parts.len();
        if let Some(when) = &part.when
            && !ctx.condition(when.as_str())?
        {
            continue;
        }
        let mut part_tags = Vec::new();
        eval_tags(&ctx, run.ruleset, &part.tags, &mut part_tags)?;
        let multiplied = part.multiplied != Some(false);
        let if_empty = part
            .if_empty
            .as_ref()
            .map(|f| ctx.eval(f.as_str()).and_then(|v| dice_items(&v, "ifEmpty")))
            .transpose()?;
        let written_source = part.source.as_ref().map(|s| source("rules", s.as_str()));
        let mut new: Vec<Item> = if let Some(dice) = &part.dice {
            let value = ctx.eval(dice.as_str())?;
            let mut dv = dice_items(&value, "a dice part")?;
            // `(0)d6` evaluates to no dice; the part keeps its die, with 0 dice, for pool dice
            // and `ifEmpty` to see.
            if dv.terms.is_empty()
                && let Some(term) = zero_term(dice.as_str())
            {
                dv.terms.push(term);
            }
            let src = written_source.clone().unwrap_or(default_source.clone());
            items_of(&dv, &src, &part_tags, multiplied)
        } else if let Some(v) = &part.value {
            let value = ctx.eval(v.as_str())?;
            let n = match value {
                Value::Int(n) => n,
                Value::Decimal(d) => d.floor(),
                other => {
                    return Err(ActionError::new(
                        "type-mismatch",
                        format!("a value part gives a {}, not a number", other.type_name()),
                    ));
                }
            };
            let field = single_field(&ctx, v.as_str());
            if let Some(f) = &field {
                carried.extend(carried_of(run, f, index));
            }
            let src = written_source
                .clone()
                .unwrap_or_else(|| field.map_or(default_source.clone(), |f| source("field", &f)));
            vec![new_flat_item(n, &src, &part_tags, multiplied)]
        } else if let Some(f) = &part.field {
            let id = match ctx.eval(f.as_str())? {
                Value::String(s) => s.to_string(),
                other => {
                    return Err(ActionError::new(
                        "type-mismatch",
                        format!("a field part gives a {}, not a field ID", other.type_name()),
                    ));
                }
            };
            let qualified = ctx.sheet.resolve(&id).ok_or_else(|| {
                ActionError::new("unknown-field", format!("no field `{id}`"))
                    .with("field", id.as_str())
            })?;
            let n = match ocf_formula::Context::field(&ctx, &qualified) {
                Ok(Some(Value::Int(n))) => n,
                Ok(Some(Value::Decimal(d))) => d.floor(),
                Ok(_) => 0,
                Err(e) => return Err(ActionError::new(e.code.as_str(), e.message)),
            };
            carried.extend(carried_of(run, &qualified, index));
            let src = written_source
                .clone()
                .unwrap_or_else(|| source("field", &qualified));
            vec![new_flat_item(n, &src, &part_tags, multiplied)]
        } else {
            Vec::new()
        };
        for item in &mut new {
            item.part = Some(index);
        }
        parts.push(Part {
            tags: part_tags,
            multiplied,
            if_empty,
            is_dice: part.dice.is_some(),
        });
        items.extend(new);
    }
    drop(ctx);

    // 2. The roll effects: active instances aimed at the step's tags, then the selected
    // situational choices' effects.
    let index = ocf_engine::effects::effect_instances(run.db, run.character);
    let mut counted: Vec<Counted<'db>> = Vec::new();
    let matches = |targets: &[ocf_model::Tag]| {
        targets
            .iter()
            .any(|t| tags.iter().any(|s| ocf_model::tag_matches(t.as_str(), s)))
    };
    for instance in &index.list {
        let Target::Rolls { rolls, from, .. } = &instance.effect.target else {
            continue;
        };
        if !matches(rolls) {
            continue;
        }
        if *from == Some(ocf_model::From::Self_) && instance.source.entry != frame.entry {
            continue;
        }
        let ctx = instance_ctx(run, frame, at, instance, &tags);
        if let Some(when) = &instance.effect.when
            && !ctx.condition(when.as_str())?
        {
            continue;
        }
        counted.push(Counted {
            effect: &instance.effect,
            source: source(instance.source.kind.as_str(), &instance.source.id),
            ctx,
            order: instance.order,
        });
    }
    for qualified in &frame.selected {
        let Some(decl) = run.ruleset.situational.get(qualified) else {
            continue;
        };
        for effect in &decl.decl.effects {
            let Target::Rolls { rolls, .. } = &effect.target else {
                continue;
            };
            if !matches(rolls) {
                continue;
            }
            let base = run.ctx(frame, Some(at));
            let mut ctx = ActionContext::new(
                run.db,
                run.character,
                &decl.pack,
                ocf_engine::context::SelfRef::None,
                None,
            );
            ctx.roots = base.roots.clone();
            bind_roll_view(&mut ctx, frame, at, &tags);
            if let Some(when) = &effect.when
                && !ctx.condition(when.as_str())?
            {
                continue;
            }
            counted.push(Counted {
                effect,
                source: source("situational", qualified),
                ctx,
                order: usize::MAX,
            });
        }
    }

    let settings = &run.ruleset.settings;
    // 2a. `set` on parts replaces them before anything reads them.
    for (p, part) in parts.iter().enumerate() {
        let mut best: Option<(DiceValue, ItemSource, Option<String>)> = None;
        for c in &counted {
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
                .map(|i| i.item.clone())
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

    // `add` effects: stacked by key, each counted one an item.
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
        items.extend(items_of(
            dv,
            &c.source,
            &effect_tags,
            c.effect.multiplied != Some(false),
        ));
    }

    // Roll modifiers, bounds and tallies, each stacked by key and policy: modifiers per kind
    // (compared by `factor`, `steps` or `count`), bounds per op (EF "Bounds on a roll's total":
    // "stacking applies per op"), tallies per tally and op (EA "Roll tallies").
    let arg = |c: &Counted<'_>, m: &ocf_model::RollModifier| -> Option<Value> {
        let f = match m.kind {
            RollModifierKind::Multiply | RollModifierKind::MultiplyDice => m.factor.as_ref(),
            RollModifierKind::StepDie => m.steps.as_ref(),
            _ => m.count.as_ref(),
        };
        f.and_then(|f| c.ctx.eval(f.as_str()).ok())
    };
    let arg_int = |c: &Counted<'_>, m: &ocf_model::RollModifier| -> i64 {
        arg(c, m)
            .and_then(|v| v.as_decimal())
            .map_or(0, |d| d.floor())
    };
    let number = |v: &Option<Value>| -> i128 {
        v.as_ref()
            .and_then(Value::as_millionths)
            .map_or(0, |m| m.get())
    };
    let mut modifiers: Vec<(&Counted<'db>, &ocf_model::RollModifier, i128)> = Vec::new();
    let mut bounds = Vec::new();
    let mut tallies = Vec::new();
    for c in &counted {
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
    let part_matches = |c: &Counted<'_>, item: &Item| -> bool {
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
    };

    // 2b. Die steps on the parts' dice.
    for item in items.iter_mut().filter(|i| i.part.is_some()) {
        let mut steps = 0i64;
        for (c, m, _) in &modifiers {
            if m.kind == RollModifierKind::StepDie && part_matches(c, item) {
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
    // 3. Pool dice, on the named part's (else the first dice part's) first dice item.
    for (c, m, _) in &modifiers {
        if m.kind != RollModifierKind::PoolDice {
            continue;
        }
        let count = arg_int(c, m).max(0) as u32;
        let part = match &m.part {
            Some(tag) => parts.iter().position(|p| p.tags.iter().any(|t| t == tag)),
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
    // 4. Empty pools take their `ifEmpty` dice.
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
    // 5. Advantage and disadvantage on the main dice item.
    let mut adv = 0usize;
    let mut dis = 0usize;
    let mut no_adv = false;
    let mut no_dis = false;
    let mut advantage = Vec::new();
    for (c, m, _) in &modifiers {
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
    // 6. Multiplied dice.
    for (c, m, _) in &modifiers {
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
    // 7. Rerolls, minimum faces, explosions: on every dice item without one of that type.
    for (c, m, _) in &modifiers {
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
    // 8. Given faces: the first counted `setFaces` on an item.
    for (c, m, _) in &modifiers {
        if m.kind != RollModifierKind::SetFaces {
            continue;
        }
        let target = items.iter().position(|i| {
            i.term.is_some() && (m_has_parts(c) && part_matches(c, i) || !m_has_parts(c))
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
    // Multiply factors, counted, in effect order.
    let mut multiply = Vec::new();
    for (c, m, _) in &modifiers {
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
    for item in items.iter_mut() {
        if let Some(term) = &item.term {
            let mods: Vec<ocf_dice::ItemModifier> = term.modifiers.iter().map(Into::into).collect();
            item.item.modifiers = (!mods.is_empty()).then_some(mods);
        }
    }
    Ok(Built {
        items,
        parts,
        tags,
        empty,
        multiply,
        bounds,
        tallies,
        advantage,
        _marker: std::marker::PhantomData,
    })
}

/// The die and modifiers of a computed-count dice formula (`(params.rating.value)d6kh1`), as a
/// term of 0 dice.
fn zero_term(text: &str) -> Option<DiceTerm> {
    use ocf_syntax::ast::Expr;
    let parse = ocf_syntax::parse(text);
    let Some(Expr::ComputedDice(d)) = parse.root().expr() else {
        return None;
    };
    let n = d.notation()?;
    Some(DiceTerm::new(0, n.die, n.modifiers))
}

fn m_has_parts(c: &Counted<'_>) -> bool {
    matches!(&c.effect.target, Target::Rolls { parts: Some(_), .. })
}

pub fn int_of(value: &Value) -> Result<i64, ActionError> {
    match value {
        Value::Int(n) => Ok(*n),
        Value::Decimal(d) => Ok(d.floor()),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("expected a number, got a {}", other.type_name()),
        )),
    }
}
