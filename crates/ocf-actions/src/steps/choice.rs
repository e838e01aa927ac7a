//! Choice steps (DA "Choice steps", EA "Choice steps"): picks from written options, content or
//! copies, then the options content adds; `recommend` or `prefer` names the rules' pick, or while
//! `random` holds a die draws it among the source's options. With `repeat` the step picks up to
//! `max` times, `#done` offered last once `min` picks are made; each pick proposes its changes at
//! once, and with `sheet: proposed` the sheet is built again before the next pick.

use ocf_formula::{Root, Value};
use ocf_model::{EffectValue, Op, StepOptions, StepRecommend, StepSource, Target};
use serde_json::{Value as Json, json};

use super::pending::DONE;
use crate::context::set_member;
use crate::error::ActionError;
use crate::run::{Flow, Frame, Run, StepAt, Stop, eval_tags};
use crate::state::Then;
use crate::tag::Tag;

/// One offered option.
struct Offer<'db> {
    id: String,
    item: Option<Value>,
    copy: Option<Value>,
    changes: &'db [ocf_model::Change],
    to: Option<ocf_model::Destination>,
    flags: Option<&'db ocf_model::Keyed<ocf_model::Formula>>,
    /// An added option's effect instance: its `flags` and `changes` are evaluated in the
    /// content's context (EF "Options added to choice steps").
    instance: Option<&'db ocf_engine::effects::Instance>,
}

pub fn run<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
) -> Result<(Flow, Option<Value>), Stop> {
    let step = at.step;
    let ctx = run.ctx(frame, Some(at));
    let mut tags = frame.extra_tags.clone();
    eval_tags(&ctx, run.ruleset, &step.tags, &mut tags)?;
    if let Some(StepOptions::Source(StepSource::Pending { pending })) = &step.options {
        let entry = match &pending.entry {
            Some(f) => match ctx.eval(f.as_str())? {
                Value::String(s) => Some(s.to_string()),
                other => {
                    return Err(ActionError::new(
                        "type-mismatch",
                        format!(
                            "a pending source's entry is an instance ID, not a {}",
                            other.type_name()
                        ),
                    )
                    .into());
                }
            },
            None => None,
        };
        drop(ctx);
        return super::pending::run(run, frame, at, &tags, entry);
    }
    // `repeat`: up to `max` picks, `#done` offered once `min` are made (evaluated once).
    let repeat = match &step.repeat {
        Some(r) => {
            let max = int(&ctx, r.max.as_str())?;
            let min = match &r.min {
                Some(m) => int(&ctx, m.as_str())?,
                None => 0,
            };
            Some((min.max(0), max.max(0)))
        }
        None => None,
    };
    drop(ctx);
    let mut picks: Vec<String> = Vec::new();
    let mut last: Option<(Option<Value>, Option<Value>)> = None;
    let most = repeat.map_or(1, |(_, max)| max);
    loop {
        if picks.len() as i64 >= most {
            break;
        }
        crate::run::count_pick(run, &at.path, picks.len())?;
        // Each pick proposes its changes at once: the proposed sheet is built again.
        if !picks.is_empty() {
            run.rebuild(at)?;
        }
        let index = picks.len();
        let (offers, written) = offers(run, frame, at, &tags, &picks)?;
        if offers.is_empty() {
            // A step with nothing to offer is skipped; a repeated one ends.
            if index == 0 {
                return Ok((Flow::Next, None));
            }
            break;
        }
        let done = repeat.is_some_and(|(min, _)| picks.len() as i64 >= min);
        let random = match &step.random {
            Some(f) => run.ctx(frame, Some(at)).condition(f.as_str())?,
            None => false,
        };
        let recommended = if random && written > 0 {
            let among: Vec<String> = offers[..written].iter().map(|o| o.id.clone()).collect();
            let i = super::draw::draw(run, frame, at, &tags, &among)?;
            Some(among[i].clone())
        } else if random {
            None
        } else {
            recommend(run, frame, at, &offers[..written], &picks)?
        };
        let decision = run.checkpoints.decide("choice", &tags, &at.path);
        let (picked, by) = match (decision, &recommended) {
            (Then::Auto, Some(r)) => (r.clone(), "engine"),
            _ => match run.checkpoints.take_answer() {
                None => {
                    let mut need = serde_json::Map::new();
                    need.insert("kind".into(), json!("choice"));
                    need.insert("step".into(), json!(at.path));
                    need.insert("action".into(), json!(frame.id));
                    let mut list: Vec<Json> =
                        offers.iter().map(|o| json!({ "id": o.id })).collect();
                    if done {
                        list.push(json!({ "id": DONE }));
                    }
                    need.insert("options".into(), Json::Array(list));
                    if let Some(r) = &recommended {
                        need.insert("recommended".into(), json!(r));
                    }
                    if repeat.is_some() {
                        need.insert("index".into(), json!(index));
                    }
                    return Err(Stop::Pause(Json::Object(need)));
                }
                Some(answer) => {
                    let option = crate::replay::expect_answer(answer, "choice", &at.path)?
                        .option
                        .clone()
                        .unwrap_or_default();
                    if !(offers.iter().any(|o| o.id == option) || (done && option == DONE)) {
                        return Err(ActionError::new(
                            "answer-mismatch",
                            format!("`{option}` is not an option of step `{}`", at.path),
                        )
                        .with("step", at.path.as_str())
                        .with("option", option)
                        .into());
                    }
                    (option, "app")
                }
            },
        };
        let mut entry = json!({
            "step": at.path, "action": frame.id, "kind": "choice", "by": by, "picked": picked,
        });
        if repeat.is_some() {
            entry["index"] = json!(index);
        }
        run.log.push(entry);
        if picked == DONE {
            break;
        }
        let offer = offers
            .iter()
            .find(|o| o.id == picked)
            .expect("picked among offers");
        pick(run, frame, at, &tags, offer)?;
        last = Some((offer.item.clone(), offer.copy.clone()));
        picks.push(picked);
    }
    let result = match repeat {
        Some(_) => Value::map([(
            "picked",
            Value::list(picks.iter().map(|p| Value::string(p.as_str())).collect()),
        )]),
        None => {
            let mut result = vec![("picked", Value::string(picks[0].as_str()))];
            if let Some((item, copy)) = last {
                if let Some(item) = item {
                    result.push(("item", item));
                }
                if let Some(copy) = copy {
                    result.push(("self", copy));
                }
            }
            Value::map(result)
        }
    };
    Ok((Flow::Next, Some(result)))
}

/// An integer formula.
fn int(ctx: &crate::context::ActionContext<'_>, text: &str) -> Result<i64, ActionError> {
    match ctx.eval(text)? {
        Value::Int(i) => Ok(i),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("`{text}` gives a {}, not an integer", other.type_name()),
        )
        .with("formula", text)),
    }
}

/// How many times `id` was picked already.
fn picks_of(picks: &[String], id: &str) -> Value {
    Value::Int(picks.iter().filter(|p| *p == id).count() as i64)
}

/// The options of one pick: the source's, then those content adds; and how many are the source's.
fn offers<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    tags: &[Tag],
    picks: &[String],
) -> Result<(Vec<Offer<'db>>, usize), Stop> {
    let step = at.step;
    let ctx = run.ctx(frame, Some(at));
    let mut offers: Vec<Offer<'db>> = Vec::new();
    let action_root = ctx.action_value();
    match &step.options {
        Some(StepOptions::Written(options)) => {
            for o in options {
                let mut c = child_ctx(&ctx, &action_root);
                c.bind(Root::Picks, picks_of(picks, &o.id));
                if let Some(w) = &o.when
                    && !c.condition(w.as_str())?
                {
                    continue;
                }
                offers.push(Offer {
                    id: o.id.clone(),
                    item: None,
                    copy: None,
                    changes: &o.changes,
                    to: o.to.clone(),
                    flags: Some(&o.flags),
                    instance: None,
                });
            }
        }
        Some(StepOptions::Source(StepSource::Content { content })) => {
            let ty = run
                .ruleset
                .resolve(
                    frame.pack,
                    content.r#type.as_str(),
                    ocf_model::Namespace::ContentType,
                )
                .unwrap_or_else(|| content.r#type.as_str().to_owned());
            for (id, entry) in run.ruleset.content.iter() {
                if entry.hidden || entry.type_name() != Some(ty.as_str()) {
                    continue;
                }
                let key = ocf_engine::view::ItemKey::new(
                    run.db,
                    run.character.ruleset(run.db),
                    id.to_owned(),
                    Vec::new(),
                );
                let item = ocf_engine::view::item_view(run.db, key)
                    .clone()
                    .unwrap_or_default();
                let mut c = child_ctx(&ctx, &action_root);
                c.bind(Root::Item, item.clone());
                c.bind(Root::Picks, picks_of(picks, id));
                if let Some(w) = &content.r#where
                    && !c.condition(w.as_str())?
                {
                    continue;
                }
                offers.push(Offer {
                    id: id.to_owned(),
                    item: Some(item),
                    copy: None,
                    changes: &[],
                    to: None,
                    flags: None,
                    instance: None,
                });
            }
        }
        Some(StepOptions::Source(StepSource::Copies { copies })) => {
            let ty = run
                .ruleset
                .resolve(
                    frame.pack,
                    copies.r#type.as_str(),
                    ocf_model::Namespace::ContentType,
                )
                .unwrap_or_else(|| copies.r#type.as_str().to_owned());
            let c = run.character;
            for copy in c.inventory(run.db).iter().chain(c.features(run.db).iter()) {
                let view = ocf_engine::view::copy_view(run.db, c, *copy);
                let item = ocf_engine::view::copy_item(run.db, *copy)
                    .cloned()
                    .unwrap_or_default();
                let content = crate::context::member(&view, "item").and_then(|i| match i {
                    Value::String(s) => Some(s.to_string()),
                    _ => None,
                });
                let matches_type = content
                    .as_deref()
                    .and_then(|id| run.ruleset.item(id))
                    .is_some_and(|e| e.type_name() == Some(ty.as_str()));
                if !matches_type {
                    continue;
                }
                let self_value = ocf_engine::view::copy_self(run.db, c, *copy).clone();
                let id = match crate::context::member(&self_value, "id") {
                    Some(Value::String(s)) => s.to_string(),
                    _ => continue,
                };
                let mut cx = child_ctx(&ctx, &action_root);
                cx.bind(Root::Item, item.clone());
                cx.bind(Root::SelfCopy, self_value.clone());
                cx.bind(Root::Picks, picks_of(picks, &id));
                if let Some(w) = &copies.r#where
                    && !cx.condition(w.as_str())?
                {
                    continue;
                }
                offers.push(Offer {
                    id,
                    item: Some(item),
                    copy: Some(self_value),
                    changes: &[],
                    to: None,
                    flags: None,
                    instance: None,
                });
            }
        }
        _ => {}
    }
    drop(ctx);
    let written = offers.len();
    // Options content adds to the step's tags, after the source's, never recommended.
    let index = ocf_engine::effects::effect_instances(run.db, run.character);
    // Of the options sharing a `stackKey` on the step, only the first offered counts, whatever
    // the stacking policy (EF "Options added to choice steps").
    let mut keys: Vec<String> = Vec::new();
    for instance in &index.list {
        let Target::Choices { choices, from } = &instance.effect.target else {
            continue;
        };
        if instance.effect.op != Op::Option
            || !choices
                .iter()
                .any(|t| tags.iter().any(|s| ocf_model::tag_matches(t.as_str(), s)))
        {
            continue;
        }
        if *from == Some(ocf_model::From::Self_) && instance.source.entry != frame.entry {
            continue;
        }
        let Some(EffectValue::Option(option)) = &instance.effect.value else {
            continue;
        };
        let ictx = crate::roll::build::instance_ctx(run, frame, at, instance, tags);
        if let Some(when) = &instance.effect.when
            && !ictx.condition(when.as_str())?
        {
            continue;
        }
        let id = format!("{}#{}", instance.source.id, option.id);
        if offers.iter().any(|o| o.id == id) {
            continue;
        }
        if let Some(key) = &instance.effect.stack_key {
            let key = if key == "source" {
                format!("source={}", instance.source.id)
            } else {
                key.clone()
            };
            if keys.contains(&key) {
                continue;
            }
            keys.push(key);
        }
        offers.push(Offer {
            id,
            item: None,
            copy: None,
            changes: &option.changes,
            to: option.to.clone(),
            flags: Some(&option.flags),
            instance: Some(instance),
        });
    }
    Ok((offers, written))
}

/// The rules' pick among the source's options: `recommend`, else the highest `prefer`.
fn recommend<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    offers: &[Offer<'db>],
    picks: &[String],
) -> Result<Option<String>, ActionError> {
    let step = at.step;
    let ctx = run.ctx(frame, Some(at));
    let action_root = ctx.action_value();
    let ids: Vec<Value> = offers
        .iter()
        .map(|o| Value::string(o.id.as_str()))
        .collect();
    Ok(match &step.recommend {
        Some(StepRecommend::Option(f)) => {
            let mut c = child_ctx(&ctx, &action_root);
            c.bind(Root::Options, Value::list(ids));
            match c.eval(f.as_str())? {
                Value::String(s) if offers.iter().any(|o| o.id == *s) => Some(s.to_string()),
                _ => None,
            }
        }
        _ => match &step.prefer {
            Some(p) => {
                let mut best: Option<(String, Value)> = None;
                for o in offers {
                    let mut c = child_ctx(&ctx, &action_root);
                    if let Some(item) = &o.item {
                        c.bind(Root::Item, item.clone());
                    }
                    if let Some(copy) = &o.copy {
                        c.bind(Root::SelfCopy, copy.clone());
                    }
                    c.bind(Root::Picks, picks_of(picks, &o.id));
                    let v = c.eval(p.as_str())?;
                    let better = match (&best, v.as_decimal()) {
                        (None, Some(_)) => true,
                        (Some((_, b)), Some(d)) => b.as_decimal().is_some_and(|b| d > b),
                        _ => false,
                    };
                    if better {
                        best = Some((o.id.clone(), v));
                    }
                }
                best.map(|(id, _)| id)
            }
            None => None,
        },
    })
}

/// A pick: its flags first, then its own changes, then the step's.
fn pick<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    tags: &[Tag],
    offer: &Offer<'db>,
) -> Result<(), Stop> {
    let step = at.step;
    let offer_ctx = |run: &Run<'db, '_>, frame: &Frame<'db>| match offer.instance {
        Some(instance) => crate::roll::build::instance_ctx(run, frame, at, instance, tags),
        None => run.ctx(frame, Some(at)),
    };
    if let Some(flags) = offer.flags {
        let ctx = offer_ctx(run, frame);
        let mut values = Vec::new();
        for (name, f) in flags.iter() {
            values.push((name.to_owned(), ctx.eval(f.as_str())?));
        }
        drop(ctx);
        crate::context::set_members(&mut frame.flags, values);
    }
    let mut picked_value = vec![("id", Value::string(offer.id.as_str()))];
    if let Some(item) = &offer.item {
        picked_value.push(("item", item.clone()));
    }
    if let Some(copy) = &offer.copy {
        picked_value.push(("self", copy.clone()));
    }
    let picked_value = Value::map(picked_value);
    let step_changes: &'db [ocf_model::Change] = &step.changes;
    if !offer.changes.is_empty() {
        let mut ctx = offer_ctx(run, frame);
        ctx.bind(Root::Picked, picked_value.clone());
        super::changes::propose_in(run, frame, at, offer.changes, offer.to.as_ref(), ctx)?;
    }
    if !step_changes.is_empty() {
        super::changes::propose(run, frame, at, step_changes, None, Some(&picked_value))?;
    }
    Ok(())
}

pub(crate) fn child_ctx<'a>(
    ctx: &crate::context::ActionContext<'a>,
    action_root: &Option<Value>,
) -> crate::context::ActionContext<'a> {
    let mut c = crate::context::ActionContext::new(
        ctx.sheet.db,
        ctx.sheet.character,
        ctx.sheet.bindings.pack,
        ocf_engine::context::SelfRef::None,
        None,
    );
    c.copy_bound_roots(ctx);
    let mut action = action_root.clone().unwrap_or_default();
    if let Some(item) = ctx.item_value() {
        set_member(&mut action, "item", item);
    }
    if let Some(s) = ctx.self_value() {
        set_member(&mut action, "self", s);
    }
    c.bind(Root::Action, action);
    c
}
