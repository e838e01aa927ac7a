//! Action steps (EA "Other steps", action): a nested action with evaluated `params`, `source`,
//! `entry`, `participants`, `tags` and `situational`; its outcome is `steps.<id>.result` and
//! `.data`, its proposed changes are the parent's (or, with `hold`, held under the step).

use ocf_formula::Value;
use ocf_model::Namespace;
use serde_json::Value as Json;

use super::{Flow, Frame, Run, StepAt, Stop, eval_tags};
use crate::error::ActionError;
use crate::params::Given;

pub fn run<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
) -> Result<(Flow, Option<Value>), Stop> {
    let step = at.step;
    if step.r#as.is_some() {
        return Err(ActionError::new(
            "unsupported-step",
            "handoffs (`as: participant`) are not run yet (issue 15)",
        )
        .into());
    }
    if frame.depth + 1 > run.limits.max_action_depth {
        return Err(ActionError::new(
            "safety-limit-exceeded",
            format!(
                "actions nested deeper than {} (maxActionDepth)",
                run.limits.max_action_depth
            ),
        )
        .with("limit", "maxActionDepth")
        .into());
    }
    let Some(used) = &step.r#use else {
        return Err(ActionError::new("unknown-action", "an action step names no `use`").into());
    };
    let ctx = run.ctx(frame, Some(at));
    let used_id = run
        .ruleset
        .resolve(frame.pack, used.as_str(), Namespace::Action)
        .unwrap_or_else(|| used.as_str().to_owned());
    let mut params = Vec::new();
    for (name, formula) in step.params.iter() {
        let value = ctx.eval(formula.as_str())?;
        if value != Value::Null {
            params.push((name.to_owned(), Given::Value(value)));
        }
    }
    let string_of = |formula: &ocf_model::Formula| -> Result<String, ActionError> {
        match ctx.eval(formula.as_str())? {
            Value::String(s) if !s.is_empty() => Ok(s.to_string()),
            other => Err(ActionError::new(
                "type-mismatch",
                format!("`{formula}` gives a {}, not a string", other.type_name()),
            )),
        }
    };
    let source = step
        .source
        .as_ref()
        .map(|f| {
            string_of(f).map(|s| {
                run.ruleset
                    .resolve(frame.pack, &s, Namespace::Content)
                    .unwrap_or(s)
            })
        })
        .transpose()?;
    let entry = step.entry.as_ref().map(string_of).transpose()?;
    let mut participants = Vec::new();
    for (role, formula) in step.participants.iter() {
        participants.push((role.to_owned(), ctx.eval(formula.as_str())?));
    }
    let mut tags = frame.extra_tags.clone();
    eval_tags(&ctx, run.ruleset, &step.tags, &mut tags)?;
    let mut situational = frame.situational_by_id.clone();
    for (id, formula) in step.situational.iter() {
        let value = ctx.eval(formula.as_str())?;
        let qualified = run
            .ruleset
            .resolve(frame.pack, id, Namespace::Situational)
            .unwrap_or_else(|| id.to_owned());
        situational.retain(|(q, _)| *q != qualified);
        situational.push((qualified, value));
    }
    drop(ctx);
    // With `source` or `entry`, the listing computeSheet gives; without, the parent's copy.
    let found = if source.is_some() || entry.is_some() {
        let listed_id = match &source {
            Some(src) if run.ruleset.actions.get(&used_id).is_none() => {
                format!("{src}#{}", used.as_str())
            }
            _ => used_id.clone(),
        };
        let entry = entry.clone().or_else(|| {
            // The listing with the parent's entry first.
            frame.entry.clone()
        });
        crate::find::find(
            run.db,
            run.character,
            &listed_id,
            entry.as_deref(),
            source.as_deref(),
            true,
        )
        .or_else(|e| {
            if step.entry.is_none() && entry.is_some() {
                crate::find::find(
                    run.db,
                    run.character,
                    &listed_id,
                    None,
                    source.as_deref(),
                    true,
                )
            } else {
                Err(e)
            }
        })?
    } else {
        let Some(action) = run.ruleset.actions.get(&used_id) else {
            return Err(
                ActionError::new("unknown-action", format!("no rules action `{used_id}`"))
                    .with("action", used_id)
                    .into(),
            );
        };
        crate::find::Found {
            id: used_id.clone(),
            def: &action.decl,
            pack: &action.pack,
            fixed: None,
            self_ref: frame.self_ref.clone(),
            item: frame.item,
            entry: frame.entry.clone(),
            source: frame.source.clone(),
        }
    };
    let nested_participants =
        crate::participants::nested(found.def, &frame.participants, participants)?;
    let prefix = format!("{}/", at.path);
    let mut child = crate::make_frame(
        run,
        found,
        params,
        &situational,
        nested_participants,
        prefix.clone(),
        frame.depth + 1,
        tags,
        false,
    )?;
    let start = run.proposed.len();
    let def = child.def;
    let flow = run.run_steps(&mut child, &def.steps, &prefix, None)?;
    let outcome = match flow {
        Flow::Done(o) => o,
        Flow::Next => Json::Object(Default::default()),
    };
    crate::context::set_member(
        &mut frame.nested,
        &step.id,
        Value::map([
            ("steps", child.steps.clone()),
            ("nested", child.nested.clone()),
        ]),
    );
    if step.hold == Some(true) {
        let held: Vec<Json> = run.proposed.drain(start..).collect();
        match frame.held.iter_mut().find(|(id, _)| *id == step.id) {
            Some((_, list)) => list.extend(held),
            None => frame.held.push((step.id.clone(), held)),
        }
    }
    let mut result = Vec::new();
    if let Some(r) = outcome.get("result") {
        result.push(("result", Value::from_json(r).unwrap_or_default()));
    }
    if let Some(d) = outcome.get("data") {
        result.push(("data", Value::from_json(d).unwrap_or_default()));
    }
    Ok((Flow::Next, Some(Value::map(result))))
}
