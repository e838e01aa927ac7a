//! Building the roll, parts (EA "Building the roll" 1): the field instances a part that reads a
//! field carries for step 2's stacking.

use ocf_formula::Value;
use ocf_model::Op;

use super::{Carried, source};
use crate::run::Run;

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
