//! Allocate steps (DA "Allocate steps"): amounts handed to several fields at once, either a
//! `budget` spent across them (one `adjust` per field given a non-zero amount) or a list of
//! `values`, one per field, each used once (one `set` per field given a value).
//!
//! The step offers the ruleset's integer input fields its `fields` query matches, in field order,
//! each seen as `item` (`id`, `type`, its tags on the step's sheet). An amount never takes a
//! field's input past its `max`, and `limit` (with `field`: `{ id, value }`, the value before the
//! step) narrows it; `cost` (with `field` and `amount`) is what an amount costs, else the amount.
//! `recommend` is used only when it is a valid answer; while `random` holds, the recommendation is
//! drawn instead, a die per draw ([`super::draw`]). Under an automatic policy the engine takes the
//! recommendation; without one the step pauses for `{ amounts }`, checked here
//! (`answer-mismatch`).

use ocf_formula::{Root, Value};
use ocf_model::{Change, Spend, StepRecommend};
use serde_json::{Map, Value as Json, json};

use crate::context::ActionContext;
use crate::error::ActionError;
use crate::run::{Flow, Frame, Run, StepAt, Stop, eval_tags};
use crate::state::Then;

/// One offered field.
struct Offered {
    id: String,
    /// `{ id, value }`, what `limit` and `cost` see.
    view: Value,
    /// The most it can take: its `max` less its input, and `limit`; `None` when unbounded.
    most: Option<i64>,
}

/// How the step hands out amounts.
enum Mode {
    Budget { budget: i64, all: bool },
    Values(Vec<i64>),
}

pub fn run<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
) -> Result<(Flow, Option<Value>), Stop> {
    let step = at.step;
    let ctx = run.ctx(frame, Some(at));
    let mut tags = Vec::new();
    eval_tags(&ctx, run.ruleset, &step.tags, &mut tags)?;
    let fields = offered(run, frame, &ctx, at)?;
    if fields.is_empty() {
        return Ok((Flow::Next, None));
    }
    let mode = if step.values.is_empty() {
        let budget = match &step.budget {
            Some(f) => int(&ctx, f.as_str())?,
            None => 0,
        };
        Mode::Budget {
            budget,
            all: step.spend != Some(Spend::UpTo),
        }
    } else {
        let mut values = Vec::new();
        for f in &step.values {
            values.push(int(&ctx, f.as_str())?);
        }
        Mode::Values(values)
    };
    let random = match &step.random {
        Some(f) => ctx.condition(f.as_str())?,
        None => false,
    };
    let written = match (&step.recommend, random) {
        (Some(StepRecommend::Amounts(map)), false) => {
            let mut amounts = Map::new();
            for (field, f) in map.iter() {
                let id = run
                    .ruleset
                    .resolve(frame.pack, field, ocf_model::Namespace::Field)
                    .unwrap_or_else(|| field.to_owned());
                amounts.insert(id, json!(int(&ctx, f.as_str())?));
            }
            Some(amounts)
        }
        _ => None,
    };
    drop(ctx);
    let recommended = match written {
        Some(amounts) => check(run, frame, at, &fields, &mode, &amounts)
            .ok()
            .map(|_| amounts),
        None if random => {
            let amounts = drawn(run, frame, at, &tags, &fields, &mode)?;
            check(run, frame, at, &fields, &mode, &amounts)
                .ok()
                .map(|_| amounts)
        }
        None => None,
    };
    let decision = run.checkpoints.decide("allocate", &tags, &at.path);
    let (amounts, by) = match (decision, recommended) {
        (Then::Auto, Some(r)) => (r, "engine"),
        (_, recommended) => match run.checkpoints.take_answer() {
            None => {
                let mut need = Map::new();
                need.insert("kind".into(), json!("allocation"));
                need.insert("step".into(), json!(at.path));
                need.insert("action".into(), json!(frame.id));
                let list: Vec<Json> = fields
                    .iter()
                    .map(|f| {
                        let mut o = Map::new();
                        o.insert("id".into(), json!(f.id));
                        if let Some(v) = crate::context::member(&f.view, "value") {
                            o.insert("value".into(), v.to_json());
                        }
                        if let Some(m) = f.most {
                            o.insert("max".into(), json!(m));
                        }
                        Json::Object(o)
                    })
                    .collect();
                need.insert("fields".into(), Json::Array(list));
                match &mode {
                    Mode::Budget { budget, all } => {
                        need.insert("budget".into(), json!(budget));
                        need.insert("spend".into(), json!(if *all { "all" } else { "upTo" }));
                    }
                    Mode::Values(values) => {
                        need.insert("values".into(), json!(values));
                    }
                }
                if let Some(r) = recommended {
                    need.insert("recommended".into(), Json::Object(r));
                }
                return Err(Stop::Pause(Json::Object(need)));
            }
            Some(answer) => {
                let answer = crate::replay::expect_answer(answer, "allocation", &at.path)?;
                let given = answer.amounts.clone().unwrap_or_default();
                (check(run, frame, at, &fields, &mode, &given)?, "app")
            }
        },
    };
    // By qualified field ID, in field order.
    let amounts: Vec<(String, i64)> = fields
        .iter()
        .filter_map(|f| {
            amounts
                .get(&f.id)
                .and_then(Json::as_i64)
                .map(|a| (f.id.clone(), a))
        })
        .collect();
    let amounts_json: Map<String, Json> =
        amounts.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    run.log.push(json!({
        "step": at.path, "action": frame.id, "kind": "allocation", "by": by,
        "amounts": amounts_json,
    }));
    let mut changes = Vec::new();
    for (field, amount) in &amounts {
        let change = match mode {
            Mode::Budget { .. } if *amount != 0 => {
                json!({ "type": "adjust", "field": field, "by": amount.to_string() })
            }
            Mode::Budget { .. } => continue,
            Mode::Values(_) => {
                json!({ "type": "set", "field": field, "value": amount.to_string() })
            }
        };
        let change: Change = serde_json::from_value(change)
            .map_err(|e| ActionError::new("schema-error", e.to_string()))?;
        changes.push(change);
    }
    super::changes::propose(run, frame, at, &changes, None, None)?;
    let result = Value::map([(
        "amounts",
        Value::map(
            amounts
                .iter()
                .map(|(k, v)| (k.as_str(), Value::Int(*v)))
                .collect::<Vec<_>>(),
        ),
    )]);
    Ok((Flow::Next, Some(result)))
}

/// An integer formula.
fn int(ctx: &ActionContext<'_>, text: &str) -> Result<i64, ActionError> {
    match ctx.eval(text)? {
        Value::Int(i) => Ok(i),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("`{text}` gives a {}, not an integer", other.type_name()),
        )
        .with("formula", text)),
    }
}

/// The fields the step offers, in field order: integer input fields its query matches.
fn offered<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    ctx: &ActionContext<'db>,
    at: &StepAt<'db>,
) -> Result<Vec<Offered>, ActionError> {
    let Some(query) = &at.step.fields else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (id, decl) in run.ruleset.fields.iter() {
        if decl.decl.input != Some(true) || decl.decl.r#type != ocf_model::FieldType::Integer {
            continue;
        }
        let fv =
            ocf_engine::field_value(run.db, ocf_engine::FieldKey::new(run.db, run.character, id));
        let tags = fv
            .tags
            .iter()
            .map(|t| Value::String(ocf_formula::value::shared(t.as_str())))
            .collect();
        let view = ocf_engine::context::field_view_with_tags(id, decl, tags);
        if let Some(w) = &query.r#where {
            let mut c = child(ctx);
            c.bind(Root::Item, view);
            if !c.condition(w.as_str())? {
                continue;
            }
        }
        let value = fv.value.clone().unwrap_or(Value::Int(0));
        let field = Value::map([("id", Value::string(id)), ("value", value)]);
        // Its max less its input.
        let mut most: Option<i64> = None;
        if let Some(max) = &decl.decl.max {
            let c = ActionContext::new(
                run.db,
                run.character,
                decl.pack.as_str(),
                ocf_engine::context::SelfRef::None,
                None,
            );
            let input = ocf_engine::view::raw_input(run.db, run.character, id);
            if let (Value::Int(max), Some(Value::Int(input))) = (c.eval(max.as_str())?, input) {
                most = Some((max - input).max(0));
            }
        }
        if let Some(limit) = &at.step.limit {
            let mut c = run.ctx(frame, Some(at));
            c.bind(Root::Field, field.clone());
            let l = int(&c, limit.as_str())?.max(0);
            most = Some(most.map_or(l, |m| m.min(l)));
        }
        out.push(Offered {
            id: id.to_owned(),
            view: field,
            most,
        });
    }
    Ok(out)
}

/// A context of the action's with its own roots, for a query's `where` (`item` rebound).
fn child<'a>(ctx: &ActionContext<'a>) -> ActionContext<'a> {
    let mut c = ActionContext::new(
        ctx.sheet.db,
        ctx.sheet.character,
        ctx.sheet.bindings.pack,
        ocf_engine::context::SelfRef::None,
        None,
    );
    c.copy_roots(ctx);
    c
}

/// What `amount` costs on `field`.
fn cost<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    field: &Offered,
    amount: i64,
) -> Result<i64, ActionError> {
    let Some(cost) = &at.step.cost else {
        return Ok(amount);
    };
    let mut c = run.ctx(frame, Some(at));
    c.bind(Root::Field, field.view.clone());
    c.bind(Root::Amount, Value::Int(amount));
    int(&c, cost.as_str())
}

/// Checks an answer: each amount a non-negative integer for an offered field (qualified or local
/// to the action's pack), within what the field can take; the budget's cost, or the values each
/// used once. The amounts by qualified field ID.
fn check<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    fields: &[Offered],
    mode: &Mode,
    amounts: &Map<String, Json>,
) -> Result<Map<String, Json>, ActionError> {
    let mismatch = |why: String| {
        ActionError::new("answer-mismatch", why)
            .with("step", at.path.as_str())
            .with("expected", "allocation")
    };
    let mut out = Map::new();
    let mut given: Vec<(&Offered, i64)> = Vec::new();
    for (key, amount) in amounts {
        let id = run
            .ruleset
            .resolve(frame.pack, key, ocf_model::Namespace::Field)
            .unwrap_or_else(|| key.clone());
        let Some(field) = fields.iter().find(|f| f.id == id) else {
            return Err(mismatch(format!("`{key}` is not a field the step offers"))
                .with("field", key.as_str()));
        };
        let Some(amount) = amount.as_i64() else {
            return Err(
                mismatch(format!("the amount for `{key}` is not an integer"))
                    .with("field", key.as_str()),
            );
        };
        if amount < 0 {
            return Err(
                mismatch(format!("the amount for `{key}` is negative")).with("field", key.as_str())
            );
        }
        if out.insert(id.clone(), json!(amount)).is_some() {
            return Err(mismatch(format!("`{id}` is given twice")).with("field", id.as_str()));
        }
        if let Some(most) = field.most
            && amount > most
        {
            return Err(
                mismatch(format!("{amount} is more than `{id}` can take ({most})"))
                    .with("field", id.as_str()),
            );
        }
        given.push((field, amount));
    }
    match mode {
        Mode::Budget { budget, all } => {
            let mut total: i64 = 0;
            for (field, amount) in &given {
                if *amount != 0 {
                    total = total.saturating_add(cost(run, frame, at, field, *amount)?);
                }
            }
            if (*all && total != *budget) || total > *budget {
                return Err(mismatch(format!(
                    "the amounts cost {total}; the budget is {budget}{}",
                    if *all { "" } else { " at most" }
                ))
                .with("budget", *budget));
            }
        }
        Mode::Values(values) => {
            let mut want = values.clone();
            want.sort_unstable();
            let mut got: Vec<i64> = given.iter().map(|(_, a)| *a).collect();
            got.sort_unstable();
            if want != got {
                return Err(mismatch(format!(
                    "the amounts {got:?} are not the values {want:?}, each used once"
                )));
            }
        }
    }
    Ok(out)
}

/// A random answer: each value, or each unit of the budget, to a field drawn among those that can
/// still take it.
fn drawn<'db>(
    run: &mut Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    tags: &[crate::tag::Tag],
    fields: &[Offered],
    mode: &Mode,
) -> Result<Map<String, Json>, Stop> {
    let mut amounts: Vec<i64> = vec![0; fields.len()];
    match mode {
        Mode::Values(values) => {
            let mut taken = vec![false; fields.len()];
            for value in values {
                let can: Vec<usize> = (0..fields.len())
                    .filter(|&i| !taken[i] && fields[i].most.is_none_or(|m| *value <= m))
                    .collect();
                if can.is_empty() {
                    break;
                }
                let among: Vec<String> = can.iter().map(|&i| fields[i].id.clone()).collect();
                let i = can[super::draw::draw(run, frame, at, tags, &among)?];
                taken[i] = true;
                amounts[i] = *value;
            }
        }
        Mode::Budget { budget, .. } => {
            let mut spent: i64 = 0;
            let mut draws = 0;
            loop {
                // Each draw is a die: bounded as steps are (an untrusted budget).
                draws += 1;
                if draws > run.limits.max_action_steps {
                    return Err(ActionError::new(
                        "safety-limit-exceeded",
                        "more draws than maxActionSteps",
                    )
                    .with("limit", "maxActionSteps")
                    .into());
                }
                let mut can = Vec::new();
                for (i, f) in fields.iter().enumerate() {
                    let next = amounts[i] + 1;
                    if f.most.is_some_and(|m| next > m) {
                        continue;
                    }
                    // Costs are the pack's formulas: any integer, so the sums saturate as the
                    // answer's check does.
                    let more = cost(run, frame, at, f, next)?
                        .saturating_sub(cost(run, frame, at, f, amounts[i])?);
                    if spent.saturating_add(more) <= *budget {
                        can.push((i, more));
                    }
                }
                if can.is_empty() {
                    break;
                }
                let among: Vec<String> = can.iter().map(|(i, _)| fields[*i].id.clone()).collect();
                let (i, more) = can[super::draw::draw(run, frame, at, tags, &among)?];
                amounts[i] += 1;
                spent = spent.saturating_add(more);
            }
        }
    }
    Ok(fields
        .iter()
        .zip(amounts)
        .filter(|(_, a)| *a != 0)
        .map(|(f, a)| (f.id.clone(), json!(a)))
        .collect())
}
