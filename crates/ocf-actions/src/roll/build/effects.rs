//! Building the roll, roll effects (EA "Building the roll" 2): what a roll effect's formulas see.

use ocf_engine::effects::Instance;
use ocf_formula::{Root, Value};

use crate::context::{ActionContext, set_member};
use crate::run::{Frame, Run, StepAt};

/// What an effect's formulas see: the effect's own `item`, `self` and pack, the action's as
/// `action.item`, `action.self` and `action.step`, and `roll` (`item`, `self`, `tags`).
pub fn instance_ctx<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    instance: &'db Instance,
    tags: &[String],
) -> ActionContext<'db> {
    let self_ref = match (instance.copy, instance.applied_entry) {
        (Some(copy), _) => ocf_engine::context::SelfRef::Copy(copy),
        (None, Some(e)) => ocf_engine::context::SelfRef::Value(ocf_engine::view::applied_self(
            run.ruleset,
            &run.character.applied(run.db)[e],
        )),
        _ => ocf_engine::context::SelfRef::None,
    };
    let item = (!instance.item.is_empty()).then(|| {
        ocf_engine::view::ItemKey::new(
            run.db,
            run.character.ruleset(run.db),
            &*instance.item,
            &instance.templates[..],
        )
    });
    let base = run.ctx(frame, Some(at));
    let mut ctx = ActionContext::new(run.db, run.character, &instance.pack, self_ref, item);
    ctx.roots = base.roots.clone();
    ctx.content_entry = Some(instance.source.entry.clone());
    bind_roll_view(&mut ctx, frame, at, tags);
    ctx
}

pub(super) fn bind_roll_view(
    ctx: &mut ActionContext<'_>,
    frame: &Frame<'_>,
    at: &StepAt<'_>,
    tags: &[String],
) {
    let tag_values: Vec<Value> = tags.iter().map(|t| Value::string(t.as_str())).collect();
    let mut roll = frame.action_base.clone();
    set_member(&mut roll, "tags", Value::list(tag_values.clone()));
    ctx.bind(Root::Roll, roll);
    let mut action = frame.action_base.clone();
    set_member(
        &mut action,
        "step",
        Value::map([
            ("id", Value::string(at.step.id.as_str())),
            ("tags", Value::list(tag_values)),
        ]),
    );
    ctx.bind(Root::Action, action);
}
