//! Building the roll, roll effects (EA "Building the roll" 2): the candidates (the active
//! instances on rolls whose tags match the step's, then the selected situational choices'
//! effects) whose `when` holds, and what their formulas see.

use std::rc::Rc;

use ocf_engine::effects::Instance;
use ocf_formula::{Root, Value};
use ocf_model::Target;

use super::items::{Counted, source};
use crate::context::{ActionContext, StepAction, bind_root};
use crate::error::ActionError;
use crate::run::{Frame, Run, StepAt};
use crate::tag::Tag;

/// Step 2, the roll effects: the active instances aimed at the step's tags (one `from: self` only
/// on its own copy's rolls), then the selected situational choices' effects, each whose `when`
/// holds, with the context its formulas see.
pub(super) fn roll_effects<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    step_ctx: &ActionContext<'db>,
    tags: &[Tag],
) -> Result<Vec<Counted<'db>>, ActionError> {
    let index = ocf_engine::effects::effect_instances(run.db, run.character);
    let mut counted: Vec<Counted<'db>> = Vec::new();
    let matches = |targets: &[ocf_model::Tag]| {
        targets
            .iter()
            .any(|t| tags.iter().any(|s| ocf_model::tag_matches(t.as_str(), s)))
    };
    // The step's roots and the roll's view, made once for every candidate.
    let mut base: Option<RollBase> = None;
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
        let base = base.get_or_insert_with(|| RollBase::of(step_ctx, frame, at, tags));
        let ctx = base.instance_ctx(run, instance);
        if let Some(when) = &instance.effect.when
            && !ctx.condition(when.as_str())?
        {
            continue;
        }
        counted.push(Counted {
            effect: &instance.effect,
            source: source(instance.source.kind.as_str(), &instance.source.id),
            ctx: Box::new(ctx),
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
            let base = base.get_or_insert_with(|| RollBase::of(step_ctx, frame, at, tags));
            let mut ctx = ActionContext::in_ruleset(
                run.db,
                run.character,
                run.ruleset,
                &decl.pack,
                ocf_engine::context::SelfRef::None,
                None,
            );
            base.bind(&mut ctx);
            if let Some(when) = &effect.when
                && !ctx.condition(when.as_str())?
            {
                continue;
            }
            counted.push(Counted {
                effect,
                source: source("situational", qualified),
                ctx: Box::new(ctx),
                order: usize::MAX,
            });
        }
    }

    Ok(counted)
}

/// What an effect's formulas see: the effect's own `item`, `self` and pack, the action's as
/// `action.item`, `action.self` and `action.step`, and `roll` (`item`, `self`, `tags`).
pub fn instance_ctx<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    instance: &'db Instance,
    tags: &[Tag],
) -> ActionContext<'db> {
    RollBase::new(run, frame, at, tags).instance_ctx(run, instance)
}

/// The roots every roll effect's formulas of one step share: the step's, with `roll` and
/// `action` (its `step` with the roll's tags) bound.
pub(super) struct RollBase {
    roots: Rc<Vec<(Root, Value)>>,
    action: Rc<StepAction>,
    /// The character's ruleset input, read once for the candidates' item keys.
    rules: std::cell::OnceCell<ocf_engine::input::RulesetInput>,
}

impl RollBase {
    pub(super) fn new<'db>(
        run: &Run<'db, '_>,
        frame: &Frame<'db>,
        at: &StepAt<'db>,
        tags: &[Tag],
    ) -> RollBase {
        RollBase::of(&run.ctx(frame, Some(at)), frame, at, tags)
    }

    /// The roots of `step_ctx` (the step's context), with the roll's view bound.
    pub(super) fn of(
        step_ctx: &ActionContext<'_>,
        frame: &Frame<'_>,
        at: &StepAt<'_>,
        tags: &[Tag],
    ) -> RollBase {
        let mut roots = Vec::with_capacity(9);
        roots.extend(step_ctx.bound_roots().cloned());
        // The step's `action` when the roll's tags are the step's (they are, but for a tag
        // formula that fails).
        let action = match &step_ctx.step_action {
            Some(action) if *action.tags() == *tags => action.clone(),
            _ => {
                roots.retain(|(r, _)| *r != Root::Action);
                StepAction::new(frame.action_base.clone(), &at.step.id, tags.to_vec(), true)
            }
        };
        // `roll`: the action's `item` and `self`, and the tags; made anew (a copy of the base
        // map to insert into costs more).
        let base = match &frame.action_base {
            Value::Map(m) => Some(&**m),
            _ => None,
        };
        let roll = Value::map(
            base.into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone()))
                .chain([(ocf_formula::value::key("tags"), action.tags_value().clone())]),
        );
        bind_root(&mut roots, Root::Roll, roll);
        RollBase {
            roots: Rc::new(roots),
            action,
            rules: std::cell::OnceCell::new(),
        }
    }

    /// Binds the shared roots in `ctx`.
    fn bind(&self, ctx: &mut ActionContext<'_>) {
        ctx.share_roots(self.roots.clone());
        ctx.step_action = Some(self.action.clone());
    }

    /// `instance`'s context: its own `item`, `self` and pack on the shared roots.
    pub(super) fn instance_ctx<'db>(
        &self,
        run: &Run<'db, '_>,
        instance: &'db Instance,
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
                *self.rules.get_or_init(|| run.character.ruleset(run.db)),
                &*instance.item,
                &instance.templates[..],
            )
        });
        let mut ctx = ActionContext::in_ruleset(
            run.db,
            run.character,
            run.ruleset,
            &instance.pack,
            self_ref,
            item,
        );
        self.bind(&mut ctx);
        ctx.content_entry = Some(instance.source.entry.as_deref());
        ctx
    }
}
