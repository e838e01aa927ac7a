//! Changes steps (EA "Other steps", changes; DA "Typed damage", "Computed fields and forEach"):
//! held changes released, then the step's own changes, then the changes content adds to its tags;
//! each resolved (formulas evaluated and written back as literals, fields and content qualified,
//! tags evaluated, a `split` adjust one change per damage type) and routed (`to`).

use ocf_formula::{Root, Value};
use ocf_model::{Change, Destination, Op, Target};
use serde_json::{Map, Value as Json, json};

use crate::context::{ActionContext, member};
use crate::error::ActionError;
use crate::run::{Frame, Run, StepAt, ctx_own_tags};

use super::resolve::{release_held, resolve_each};

pub fn run<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    step_ctx: Option<ActionContext<'db>>,
) -> Result<(), ActionError> {
    let step = at.step;
    if let Some(release) = &step.release {
        release_held(run, frame, at, release)?;
    }
    // The step's own tags, then those the `action` steps running the action add; the changes in
    // the same context (releasing held changes changes nothing it reads).
    let ctx = step_ctx.unwrap_or_else(|| run.ctx(frame, Some(at)));
    let tags = ctx_own_tags(&ctx, run.ruleset, frame, step)?;
    propose_in(run, frame, at, &step.changes, step.to.as_ref(), ctx)?;
    // Changes content adds: active `changes` effects of content aimed at a tag of the step, in
    // instance order, `to` their value's `to`, else the step's.
    if tags.is_empty() {
        return Ok(());
    }
    let index = ocf_engine::effects::effect_instances(run.db, run.character);
    let mut out: Vec<Json> = Vec::new();
    for instance in &index.list {
        let Target::Steps {
            steps: targets,
            from,
        } = &instance.effect.target
        else {
            continue;
        };
        if instance.effect.op != Op::Changes
            || instance.source.kind == ocf_engine::effects::SourceKind::Rules
        {
            continue;
        }
        if !targets
            .iter()
            .any(|t| tags.iter().any(|s| ocf_model::tag_matches(t.as_str(), s)))
        {
            continue;
        }
        if *from == Some(ocf_model::From::Self_) && instance.source.entry != frame.entry {
            continue;
        }
        let Some(ocf_model::EffectValue::Changes(value)) = &instance.effect.value else {
            continue;
        };
        let ctx = crate::roll::build::instance_ctx(run, frame, at, instance, &tags);
        if let Some(when) = &instance.effect.when
            && !ctx.condition(when.as_str())?
        {
            continue;
        }
        let to = value.to.as_ref().or(step.to.as_ref());
        for change in &value.changes {
            let mut resolved = resolve_each(run, frame, &ctx, change)?;
            name_new_copies_with(run, frame, &out, &mut resolved);
            for c in resolved {
                route(run, frame, at, to, c, &mut out);
            }
        }
    }
    run.proposed.extend(out);
    Ok(())
}

/// Resolves `changes` in the step's context (`picked` bound in a choice step's) and proposes
/// them `to` their destination.
pub fn propose<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    changes: &[Change],
    to: Option<&Destination>,
    picked: Option<&Value>,
) -> Result<(), ActionError> {
    let mut ctx = run.ctx(frame, Some(at));
    if let Some(p) = picked {
        ctx.bind(Root::Picked, p.clone());
    }
    propose_in(run, frame, at, changes, to, ctx)
}

/// [`propose`] in a context made by the caller: an added option's, whose `item`, `self` and
/// `entry: self` are the content carrying the effect.
pub fn propose_in<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    changes: &[Change],
    to: Option<&Destination>,
    ctx: ActionContext<'db>,
) -> Result<(), ActionError> {
    let mut resolved = Vec::new();
    for change in changes {
        let copies = resolve_each(run, frame, &ctx, change)?;
        run_count(run, copies.len().saturating_sub(1), &at.path)?;
        resolved.extend(copies);
    }
    drop(ctx);
    name_new_copies(run, frame, &mut resolved);
    let mut out = Vec::new();
    // For a role outside an `each` run: all of the step's changes for the first participant,
    // then for the next.
    let per_role = matches!(to, Some(Destination::Named(r)) if r != "self" && at.role.as_deref() != Some(r.as_str()));
    if per_role {
        let Some(Destination::Named(role)) = to else {
            unreachable!()
        };
        let views = match member(&frame.participants, role) {
            Some(Value::List(l)) => (**l).clone(),
            _ => Vec::new(),
        };
        if views.is_empty() {
            for c in resolved {
                route(run, frame, at, to, c, &mut out);
            }
        } else {
            for view in views {
                let one = StepAt {
                    step: at.step,
                    path: at.path.clone(),
                    participant: Some(view),
                    role: Some(role.clone()),
                    index: None,
                };
                for c in &resolved {
                    route(run, frame, &one, to, c.clone(), &mut out);
                }
            }
        }
    } else {
        for c in resolved {
            route(run, frame, at, to, c, &mut out);
        }
    }
    run.proposed.extend(out);
    Ok(())
}

/// An `addItem` without an `id` gets `<item local id, dots as hyphens>-<n>`, the smallest `n` ≥ 1
/// that the character and the action's earlier `addItem` changes don't use, so a replay gives the
/// same IDs (EA "Other steps", changes).
fn name_new_copies(run: &Run<'_, '_>, frame: &Frame<'_>, changes: &mut [Json]) {
    name_new_copies_with(run, frame, &[], changes)
}

fn name_new_copies_with(
    run: &Run<'_, '_>,
    frame: &Frame<'_>,
    pending: &[Json],
    changes: &mut [Json],
) {
    // Only an `addItem` without an `id` is named: the IDs taken need not be gathered otherwise.
    if !changes
        .iter()
        .any(|c| c.get("type").and_then(Json::as_str) == Some("addItem"))
    {
        return;
    }
    let added_id = |c: &Json| -> Option<String> {
        let change = c.get("change").unwrap_or(c);
        (change.get("type")?.as_str()? == "addItem")
            .then(|| change.get("entry")?.get("id")?.as_str().map(str::to_owned))?
    };
    let mut taken: Vec<String> = run
        .proposed
        .iter()
        .chain(pending)
        .chain(frame.held.iter().flat_map(|(_, held)| held))
        .filter_map(added_id)
        .collect();
    let (db, ch) = (run.db, run.character);
    taken.extend(
        ch.features(db)
            .iter()
            .chain(ch.inventory(db).iter())
            .map(|c| c.id(db).clone()),
    );
    taken.extend(ch.applied(db).iter().map(|a| a.id.clone()));
    for change in changes.iter_mut() {
        if change.get("type").and_then(Json::as_str) != Some("addItem") {
            continue;
        }
        let Some(Json::Object(entry)) = change.get_mut("entry") else {
            continue;
        };
        if let Some(id) = entry.get("id").and_then(Json::as_str) {
            taken.push(id.to_owned());
            continue;
        }
        let Some(item) = entry.get("item").and_then(Json::as_str) else {
            continue;
        };
        // `item` is passed on as a string formula (`resolve_entry`): the ID is its literal's text.
        let item = item
            .strip_prefix('\'')
            .and_then(|i| i.strip_suffix('\''))
            .unwrap_or(item);
        let id = ocf_engine::changes::made_id(item, |id| taken.iter().any(|t| t == id));
        taken.push(id.clone());
        entry.insert("id".into(), json!(id));
    }
}

/// Each `forEach` copy past the first counts toward maxActionSteps.
fn run_count(run: &mut Run<'_, '_>, extra: usize, path: &str) -> Result<(), ActionError> {
    run.steps_run += extra;
    if run.steps_run > run.limits.max_action_steps {
        return Err(ActionError::new(
            "safety-limit-exceeded",
            format!(
                "more than {} action steps (maxActionSteps)",
                run.limits.max_action_steps
            ),
        )
        .with("limit", "maxActionSteps")
        .at(path));
    }
    Ok(())
}

/// Routes one resolved change: `self`, a role (per participant), or a link.
fn route(
    run: &Run<'_, '_>,
    frame: &Frame<'_>,
    at: &StepAt<'_>,
    to: Option<&Destination>,
    change: Json,
    out: &mut Vec<Json>,
) {
    let step = Json::String(at.path.clone());
    let is_follow_up = change.get("type").and_then(Json::as_str) == Some("offerFollowUp");
    // `{ to, character, step, change }`, made with room for its members (a map that grows is
    // made again).
    let routed = |to: Json, character: Option<Json>, step: Json, change: Json| {
        let mut m = Map::with_capacity(4);
        m.insert("to".into(), to);
        if let Some(c) = character {
            m.insert("character".into(), c);
        }
        m.insert("step".into(), step);
        m.insert("change".into(), change);
        Json::Object(m)
    };
    match to {
        _ if is_follow_up => out.push(routed(json!("self"), None, step, change)),
        None => out.push(routed(json!("self"), None, step, change)),
        Some(Destination::Named(name)) if name == "self" => {
            out.push(routed(json!("self"), None, step, change))
        }
        Some(Destination::Named(role)) => {
            if at.role.as_deref() == Some(role.as_str())
                && let Some(p) = &at.participant
            {
                let id = member(p, "id").map(Value::to_json).unwrap_or_default();
                out.push(routed(json!(role), Some(id), step, change));
                return;
            }
            let views: &[Value] = match member(&frame.participants, role) {
                Some(Value::List(l)) => l,
                _ => &[],
            };
            if views.is_empty() {
                out.push(routed(json!(role), None, step, change));
                return;
            }
            for view in views {
                let id = member(view, "id").map(Value::to_json).unwrap_or_default();
                out.push(routed(json!(role), Some(id), step.clone(), change.clone()));
            }
        }
        Some(Destination::Link { link }) => {
            // The slot by its qualified ID (a destination's slot is qualified at load; one
            // written bare resolves in the action's pack), as the character's links hold it.
            let slot = run
                .ruleset
                .resolve(frame.pack, link.as_str(), ocf_model::Namespace::Link)
                .unwrap_or_else(|| link.as_str().to_owned());
            let links = ocf_engine::links::links(run.db, run.character);
            let mut routed = Map::with_capacity(4);
            routed.insert("to".into(), json!({ "link": link.as_str() }));
            if let Some(Value::String(id)) = links
                .views
                .iter()
                .find(|(s, _)| *s == slot)
                .and_then(|(_, v)| member(v, "id"))
                && !id.is_empty()
            {
                routed.insert("character".into(), json!(id.as_ref()));
            }
            routed.insert("step".into(), step);
            routed.insert("change".into(), change);
            out.push(Json::Object(routed));
        }
    }
}
