//! Building the roll, parts (EA "Building the roll" 1): the field instances a part that reads a
//! field carries for step 2's stacking.

use ocf_formula::Value;
use ocf_model::Op;

use ocf_dice::item::ItemSource;

use super::items::{
    Carried, Item, Part, Tags, dice_items, items_of, new_flat_item, single_field, source, zero_term,
};
use crate::context::ActionContext;
use crate::error::ActionError;
use crate::run::{Run, eval_tags};

/// Step 1's result: the items, each part as built, and the field instances the parts carry.
pub(super) struct Parts {
    pub items: Vec<Item>,
    pub parts: Vec<Part>,
    pub carried: Vec<Carried>,
}

/// Step 1, parts: each part whose `when` holds becomes roll items, a `dice` part its dice and flat
/// part, a `value` part a flat item, a `field` part the field's value, with the part's `source`
/// (else the field a single-field part reads, else `default_source`) and evaluated `tags`; a part
/// that reads a field carries its keyed `add` instances ([`carried_of`]).
pub(super) fn parts(
    run: &Run<'_, '_>,
    ctx: &ActionContext<'_>,
    step: &ocf_model::Step,
    default_source: &ItemSource,
) -> Result<Parts, ActionError> {
    // Sized for a part's item each (and room for the roll effects' added items), not grown.
    let mut items: Vec<Item> = Vec::with_capacity(step.parts.len() + 2);
    let mut parts: Vec<Part> = Vec::with_capacity(step.parts.len());
    let mut carried: Vec<Carried> = Vec::new();
    for part in &step.parts {
        let index = parts.len();
        if let Some(when) = &part.when
            && !ctx.condition(when.as_str())?
        {
            continue;
        }
        let mut part_tags = Vec::new();
        eval_tags(ctx, run.ruleset, &part.tags, &mut part_tags)?;
        // One list the part's items share.
        let part_tags: Tags = part_tags.into();
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
            let field = single_field(ctx, v.as_str());
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
            let n = match ocf_formula::Context::field(ctx, &qualified) {
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
    Ok(Parts {
        items,
        parts,
        carried,
    })
}

/// The keyed `add` instances that counted on the sheet for `field`, in the breakdown's order.
pub(super) fn carried_of(run: &Run<'_, '_>, field: &str, part: usize) -> Vec<Carried> {
    let key = ocf_engine::FieldKey::new(run.db, run.character, field);
    let value = ocf_engine::field_value(run.db, key);
    let index = ocf_engine::effects::effect_instances(run.db, run.character);
    let instances = index.by_field.get(field);
    let mut out = Vec::new();
    // Each counted `add` step of the breakdown is the next unsuppressed `add` instance of its
    // source, in instance order.
    let mut next = 0usize;
    for step in value.breakdown.iter().filter(|s| s.op == Op::Add) {
        let Some(found) = instances[next..].iter().position(|i| {
            i.effect.op == Op::Add
                && i.source == step.source
                && !value.suppressed.contains(&i.field_at)
        }) else {
            continue;
        };
        let instance = &instances[next + found];
        next += found + 1;
        let Some(written) = &instance.effect.stack_key else {
            continue;
        };
        let n = match &step.value {
            Value::Int(n) => *n,
            Value::Decimal(d) => d.floor(),
            _ => continue,
        };
        out.push(Carried {
            part,
            key: written.clone(),
            source_id: instance.source.id.clone(),
            value: n,
            source: source(instance.source.kind.as_str(), &instance.source.id),
            order: instance.order,
        });
    }
    out
}
