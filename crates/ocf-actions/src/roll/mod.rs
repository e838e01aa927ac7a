//! Roll steps (EA "Roll steps"): built ([`build`], by the steps of EA "Building the roll"),
//! rolled ([`rolling`]), classified ([`classify`]), with a [`summary`] of what they are rolled
//! against.

pub mod build;
pub mod classify;
pub mod rolling;
pub mod summary;

use ocf_formula::Value;
use serde_json::{Value as Json, json};

use crate::context::member;
use crate::run::{Frame, Run, StepAt, Stop, ctx_own_tags};

pub fn roll_step<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    step_ctx: Option<crate::context::ActionContext<'db>>,
) -> Result<Option<Value>, Stop> {
    let step = at.step;
    let bands = step.bands.as_ref().map(|b| b.as_str());
    // One context for the step's formulas (its `when`'s when it has one): nothing the step does
    // before it classifies changes what they read (the frame, the proposed sheet).
    let mut ctx = step_ctx.unwrap_or_else(|| run.ctx(frame, Some(at)));
    let summary = summary::summary(run.ruleset, frame, &ctx, bands);
    if let Some(of) = &step.of {
        return again(run, frame, at, of, bands, summary, ctx).map_err(Stop::Fail);
    }
    let tags = ctx_own_tags(&ctx, run.ruleset, frame, step)?;
    let mut built = build::build(run, frame, at, &ctx, tags)?;
    let has_dice = built.items.iter().any(|i| i.term.is_some());
    // The pause's `needs`, made only when the roll pauses.
    let need = || {
        let mut need = serde_json::Map::new();
        need.insert("kind".into(), json!("dice"));
        need.insert("step".into(), json!(at.path));
        need.insert("action".into(), json!(frame.id));
        need.insert("summary".into(), summary.clone());
        need
    };
    let rounding = run
        .ruleset
        .settings
        .rounding
        .unwrap_or(ocf_model::Rounding::Floor);
    let mut rolled = if run.checkpoints.odds.is_some() {
        crate::odds::classes::roll(run, frame, at, &built, bands, rounding)?
    } else {
        rolling::roll(&mut run.checkpoints, &mut built, &at.path, need, rounding)?
    };
    rolled.tallies = classify::tallies(run.ruleset, &built);
    let result = classify::result_value(&rolled, built.empty);
    let items = Json::Array(
        rolled
            .items
            .iter()
            .map(ocf_dice::RollItem::to_json)
            .collect(),
    );
    let result = classify::classify(run.ruleset, frame.pack, bands, &mut ctx, result)?;
    drop(ctx);
    // Room for every member an entry may have: a map that grows is made again.
    let mut entry = serde_json::Map::with_capacity(12);
    entry.insert("step".into(), json!(at.path));
    entry.insert("action".into(), json!(frame.id));
    entry.insert("kind".into(), json!("dice"));
    entry.insert(
        "by".into(),
        json!(if has_dice { rolled.by } else { "engine" }),
    );
    if has_dice {
        entry.insert("faces".into(), json!(rolled.supplied));
    }
    entry.insert("items".into(), items);
    entry.insert("total".into(), json!(rolled.total));
    if !rolled.tallies.is_empty() {
        let tallies: serde_json::Map<String, Json> = rolled
            .tallies
            .iter()
            .map(|(n, v)| (n.clone(), json!(v)))
            .collect();
        entry.insert("tallies".into(), Json::Object(tallies));
    }
    for key in ["band", "bandSet", "bandValue"] {
        if let Some(v) = member(&result, key) {
            entry.insert(key.into(), crate::run::data_json(v));
        }
    }
    if !built.advantage.is_empty() {
        entry.insert(
            "advantage".into(),
            Json::Array(
                built
                    .advantage
                    .iter()
                    .map(|(kind, src)| json!({ "kind": kind, "source": src }))
                    .collect(),
            ),
        );
    }
    entry.insert("summary".into(), summary);
    run.log.push(Json::Object(entry));
    Ok(Some(result))
}

/// A roll step with `of`: the earlier roll classified again by this step's bands.
fn again<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    of: &str,
    bands: Option<&str>,
    summary: Json,
    mut ctx: crate::context::ActionContext<'db>,
) -> Result<Option<Value>, crate::error::ActionError> {
    let segs: Vec<&str> = of.split('/').collect();
    let mut steps = frame.steps.clone();
    let mut nested = frame.nested.clone();
    for seg in &segs[..segs.len() - 1] {
        // A branch's steps are the action's own: only an action step's path goes down a level.
        let Some(inner) = member(&nested, seg).cloned() else {
            continue;
        };
        steps = member(&inner, "steps").cloned().unwrap_or_default();
        nested = member(&inner, "nested").cloned().unwrap_or_default();
    }
    let node = member(&steps, segs[segs.len() - 1]).cloned();
    let Some(earlier) = node.filter(|n| member(n, "total").is_some()) else {
        return Ok(None);
    };
    let result = classify::classify(run.ruleset, frame.pack, bands, &mut ctx, earlier)?;
    drop(ctx);
    // The full path names the current participant's run of a per-participant first step.
    let per_run = match (&at.role, at.index) {
        (Some(role), Some(i))
            if frame.per_participant.iter().any(|p| {
                p.root != crate::run::Root::Flags && p.name == segs[0] && p.role == *role
            }) =>
        {
            Some(i)
        }
        _ => None,
    };
    let full = match per_run {
        Some(i) => format!("{}{}[{i}]{}", frame.prefix, segs[0], &of[segs[0].len()..]),
        None => format!("{}{of}", frame.prefix),
    };
    let mut entry = serde_json::Map::new();
    entry.insert("step".into(), json!(at.path));
    entry.insert("action".into(), json!(frame.id));
    entry.insert("kind".into(), json!("dice"));
    entry.insert("by".into(), json!("engine"));
    entry.insert("of".into(), json!(full));
    if let Some(items) = member(&result, "items") {
        entry.insert("items".into(), items.to_json());
    }
    if let Some(total) = member(&result, "total") {
        entry.insert("total".into(), total.to_json());
    }
    for key in ["band", "bandSet", "bandValue"] {
        if let Some(v) = member(&result, key) {
            entry.insert(key.into(), crate::run::data_json(v));
        }
    }
    entry.insert("summary".into(), summary);
    run.log.push(Json::Object(entry));
    Ok(Some(result))
}
