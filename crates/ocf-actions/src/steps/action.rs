//! Action steps (EA "Other steps", action): a nested action with evaluated `params`, `source`,
//! `entry`, `participants`, `tags` and `situational`; its outcome is `steps.<id>.result` and
//! `.data`, its proposed changes are the parent's (or, with `hold`, held under the step). With
//! `as: participant` it is a handoff (EA "Handoffs"): the participant runs it on its own character
//! and the step takes the outcome the app answers with.

use ocf_formula::Value;
use ocf_model::Namespace;
use serde_json::{Value as Json, json};

use crate::error::ActionError;
use crate::params::Given;
use crate::run::{Flow, Frame, Run, StepAt, Stop, eval_tags};
use crate::state::Answer;
use num_rational::BigRational;

pub fn run<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
) -> Result<(Flow, Option<Value>), Stop> {
    let step = at.step;
    if step.r#as.is_some() {
        return handoff(run, frame, at);
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
        let rules_action = run.ruleset.actions.get(&used_id).is_some();
        let listed_id = match (&source, &entry) {
            (Some(src), _) if !rules_action => format!("{src}#{}", used.as_str()),
            // With `entry` alone, the action the copy's own item (or its type) defines: that
            // listing has no `source`.
            (None, Some(entry)) if !rules_action => {
                let suffix = format!("#{}", used.as_str());
                ocf_engine::actions::available_actions(run.db, run.character)
                    .iter()
                    .find(|l| {
                        l.entry.as_deref() == Some(entry)
                            && l.source.is_none()
                            && l.id.ends_with(&suffix)
                    })
                    .map_or_else(|| used_id.clone(), |l| l.id.clone())
            }
            _ => used_id.clone(),
        };
        match &entry {
            Some(entry) => crate::find::find(
                run.db,
                run.character,
                &listed_id,
                Some(entry),
                source.as_deref(),
                true,
            )?,
            // With `source` only: the listing with that action and source, "the one with the
            // parent's entry first" (EA "Other steps", `source`), else the first listed.
            None => {
                let listed = ocf_engine::actions::available_actions(run.db, run.character);
                let mut entries: Vec<Option<String>> = listed
                    .iter()
                    .filter(|l| l.id == listed_id && l.source == source)
                    .map(|l| l.entry.clone())
                    .collect();
                if let Some(i) = entries.iter().position(|e| *e == frame.entry) {
                    let parent = entries.remove(i);
                    entries.insert(0, parent);
                }
                match entries.first() {
                    Some(first) => crate::find::find(
                        run.db,
                        run.character,
                        &listed_id,
                        first.as_deref(),
                        source.as_deref(),
                        true,
                    )?,
                    None => crate::find::find(
                        run.db,
                        run.character,
                        &listed_id,
                        None,
                        source.as_deref(),
                        true,
                    )?,
                }
            }
        }
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
            pick: frame.pick.clone(),
        }
    };
    let nested_participants =
        crate::participants::nested(found.def, &frame.participants, &run.views, participants)?;
    let prefix = format!("{}/", at.path);
    let mut child = crate::run::make_frame(
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

/// A handoff (EA "Handoffs"): the used action's `params` and `participants` evaluated and checked
/// here, then a pause (always, whatever the policy) for the outcome of the participant's own run.
fn handoff<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
) -> Result<(Flow, Option<Value>), Stop> {
    let step = at.step;
    let (Some(role), Some(view)) = (&at.role, &at.participant) else {
        // The schema puts `as` with `each` only; a hand-built ruleset may not.
        return Err(ActionError::new(
            "invalid-participants",
            "a handoff (`as: participant`) runs only in an `each` step",
        )
        .into());
    };
    let participant_id = match crate::context::member(view, "id") {
        Some(Value::String(s)) => s.to_string(),
        _ => String::new(),
    };
    let Some(used) = &step.r#use else {
        return Err(ActionError::new("unknown-action", "an action step names no `use`").into());
    };
    let used_id = run
        .ruleset
        .resolve(frame.pack, used.as_str(), Namespace::Action)
        .unwrap_or_else(|| used.as_str().to_owned());
    let Some(used_action) = run.ruleset.actions.get(&used_id) else {
        return Err(
            ActionError::new("unknown-action", format!("no rules action `{used_id}`"))
                .with("action", used_id)
                .into(),
        );
    };
    // 1. Params, evaluated in the actor's context and typed by the used action.
    let ctx = run.ctx(frame, Some(at));
    let mut given = Vec::new();
    for (name, formula) in step.params.iter() {
        let value = ctx.eval(formula.as_str())?;
        if value == Value::Null {
            continue;
        }
        given.push((name.to_owned(), Given::Value(value)));
    }
    // Typed only: a field parameter's `where`, tags and value are the participant's sheet's, which
    // its own run checks (`invalid-option` there), not the actor's.
    crate::params::type_params(&used_action.decl, &given)?;
    // 2. Participants: IDs of the running action's participants or the running character's own.
    let own_id = run.character.id(run.db).clone();
    let mut roles: Vec<(&str, Vec<String>)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (nested_role, formula) in step.participants.iter() {
        let invalid = |why: String| {
            Stop::from(ActionError::new("invalid-participants", why).with("role", nested_role))
        };
        let Some(decl) = used_action.decl.participants.get(nested_role) else {
            return Err(invalid(format!(
                "`{used_id}` declares no role `{nested_role}`"
            )));
        };
        let ids = participant_ids(&ctx.eval(formula.as_str())?)?;
        for id in &ids {
            if *id != own_id && !is_participant(&frame.participants, id) {
                return Err(invalid(format!(
                    "`{id}` is neither a participant of the running action nor its character"
                )));
            }
            if seen.contains(id) {
                return Err(
                    ActionError::new("duplicate-id", format!("`{id}` is passed on twice"))
                        .with("id", id.as_str())
                        .into(),
                );
            }
            seen.push(id.clone());
        }
        let n = ids.len() as u32;
        if n < decl.min.unwrap_or(0) || decl.max.is_some_and(|max| n > max) {
            return Err(invalid(format!(
                "role `{nested_role}` is given {n} participants, outside its min and max"
            )));
        }
        roles.push((nested_role, ids));
    }
    drop(ctx);
    // 3. The pause, or the recorded answer; what the pause asks is made only when it's asked.
    let who = json!({ "role": role, "id": participant_id });
    let needs = || {
        let params: serde_json::Map<String, Json> = given
            .iter()
            .map(|(name, value)| match value {
                Given::Value(v) => (name.clone(), passed_on(v)),
                Given::Json(j) => (name.clone(), j.clone()),
            })
            .collect();
        let mut run_json = json!({ "action": used_id, "params": params });
        if !roles.is_empty() {
            run_json["participants"] = Json::Object(
                roles
                    .iter()
                    .map(|(role, ids)| (role.to_string(), json!(ids)))
                    .collect(),
            );
        }
        json!({
            "kind": "handoff",
            "step": at.path,
            "action": frame.id,
            "participant": who,
            "run": run_json,
        })
    };
    let branched;
    let answer = match run.checkpoints.take_answer() {
        Some(answer) => answer,
        None => {
            let needs = needs();
            match odds_handoff(run, &needs)? {
                Some(answer) => {
                    branched = answer;
                    &branched
                }
                None => return Err(Stop::Pause(needs)),
            }
        }
    };
    let answer = crate::replay::expect_answer(answer, "handoff", &at.path)?;
    let outcome = answer.outcome.clone().unwrap_or_default();
    let mismatch = |why: String| {
        Stop::from(
            ActionError::new("answer-mismatch", why)
                .with("step", at.path.as_str())
                .with("expected", "handoff"),
        )
    };
    if let Some(key) = outcome.keys().find(|k| *k != "result" && *k != "data") {
        return Err(mismatch(format!(
            "an outcome has `result` and `data`, not `{key}`"
        )));
    }
    // 4. A result the used action doesn't declare is `answer-mismatch`.
    let mut result = Vec::new();
    match outcome.get("result") {
        None => {}
        Some(Json::String(r)) => {
            if !crate::roll::classify::declares_result(
                run.ruleset,
                &used_action.decl,
                &used_action.pack,
                r,
            ) {
                return Err(mismatch(format!(
                    "`{used_id}` doesn't declare the result `{r}`"
                )));
            }
            result.push(("result", Value::string(r.as_str())));
        }
        Some(_) => return Err(mismatch("an outcome's `result` is a string".into())),
    }
    match outcome.get("data") {
        None => {}
        Some(d @ Json::Object(_)) => {
            result.push(("data", Value::from_json(d).unwrap_or_default()));
        }
        Some(_) => return Err(mismatch("an outcome's `data` is a map".into())),
    }
    run.log.push(json!({
        "step": at.path,
        "action": frame.id,
        "kind": "handoff",
        "by": "app",
        "participant": who,
        "outcome": Json::Object(outcome),
    }));
    // 5. The step's result is the outcome, as a nested action's.
    Ok((Flow::Next, Some(Value::map(result))))
}

/// A handoff's parameter as the app passes it to the participant's run: dice as notation, a
/// field parameter's view by its `id` (EA "Other steps", action, Parameters).
fn passed_on(value: &Value) -> Json {
    match value {
        Value::Map(m) => match m.get("id") {
            Some(Value::String(id)) => json!(id.as_ref()),
            _ => crate::run::data_json(value),
        },
        other => crate::run::data_json(other),
    }
}

/// The IDs a `participants` formula gives: a list of IDs or views (`type-mismatch` otherwise).
fn participant_ids(value: &Value) -> Result<Vec<String>, ActionError> {
    let mismatch = |what: &str| {
        ActionError::new(
            "type-mismatch",
            format!("participants are a list of IDs or views, not {what}"),
        )
    };
    let Value::List(items) = value else {
        return Err(mismatch(value.type_name()));
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.to_string()),
            Value::Map(m) => match m.get("id") {
                Some(Value::String(s)) => Ok(s.to_string()),
                _ => Err(mismatch("a view without an `id`")),
            },
            other => Err(mismatch(other.type_name())),
        })
        .collect()
}

/// Whether `id` is a participant of the running action, in any role.
fn is_participant(participants: &Value, id: &str) -> bool {
    let Value::Map(m) = participants else {
        return false;
    };
    m.values().any(|views| {
        match views {
        Value::List(l) => l.iter().any(|v| {
            matches!(crate::context::member(v, "id"), Some(Value::String(s)) if s.as_ref() == id)
        }),
        _ => false,
    }
    })
}

/// The handoff's answer when the run works out the odds (else `None`: the runtime pauses).
fn odds_handoff(run: &mut Run<'_, '_>, needs: &Json) -> Result<Option<Answer>, Stop> {
    let Some(branch) = run.checkpoints.odds.as_deref_mut() else {
        return Ok(None);
    };
    let outcomes = branch.handoff(needs)?;
    let probabilities: Vec<BigRational> = outcomes.iter().map(|(p, _)| p.clone()).collect();
    let path = needs["step"].as_str().unwrap_or_default();
    let i = branch.choose(&probabilities, path)?;
    Ok(Some(Answer {
        step: Some(path.to_owned()),
        outcome: outcomes[i].1.as_object().cloned(),
        ..Answer::default()
    }))
}
