//! OCF actions at run time: `startAction` and `continueAction` (engine-actions.md, EA;
//! dice-and-actions.md, DA), above ocf-engine's sheets.
//!
//! An action is [`find`]-ed among the character's listed actions, its [`params`], situational
//! choices and [`participants`] bound, and its steps run ([`steps`], [`roll`]) against the sheet
//! ocf-engine computes, with [`context::ActionContext`] as every formula's context. A checkpoint
//! ([`checkpoint`]) either continues by itself or pauses; the paused result carries `needs` and a
//! plain-JSON [`state::State`], and [`continue_action`] runs the action again from the start with
//! the answers so far ([`replay`]), so a replay gives the same result byte for byte.

pub mod checkpoint;
pub mod context;
pub mod error;
pub mod find;
pub mod odds;
pub mod params;
pub mod participants;
pub mod proposed;
pub mod replay;
pub mod roll;
pub mod state;
pub mod steps;

use ocf_dice::DiceFunction;
use ocf_engine::input::CharacterInput;
use ocf_formula::{Root, Value};
use serde_json::{Value as Json, json};

pub use crate::error::ActionError;
pub use crate::state::{
    ActionRef, Answer, ContinueInput, Policy, PolicyRule, StartInput, State, Then,
};
pub use crate::steps::Limits;

use crate::checkpoint::Checkpoints;
use crate::context::{ActionContext, empty_map, set_member};
use crate::params::Given;
use crate::steps::{Flow, Frame, Run, Stop};

/// Builds the frame of an action about to run: its `action.item` / `action.self`, parameters and
/// situational choices.
#[allow(clippy::too_many_arguments)]
pub(crate) fn make_frame<'db>(
    run: &Run<'db, '_>,
    found: find::Found<'db>,
    params: Vec<(String, Given)>,
    situational: &[(String, Value)],
    participants: Value,
    prefix: String,
    depth: usize,
    extra_tags: Vec<String>,
    check_available: bool,
) -> Result<Frame<'db>, ActionError> {
    let mut ctx = ActionContext::new(
        run.db,
        run.character,
        found.pack,
        found.self_ref.clone(),
        found.item,
    );
    let mut action_base = empty_map();
    if let Some(item) = ctx.item_value() {
        set_member(&mut action_base, "item", item);
    }
    if let Some(s) = ctx.self_value() {
        set_member(&mut action_base, "self", s);
    }
    ctx.bind(Root::Action, action_base.clone());
    ctx.bind(Root::Participants, participants.clone());
    let fixed_ctx = found.fixed.map(|(params, pack)| {
        let mut c = ActionContext::new(
            run.db,
            run.character,
            pack,
            found.self_ref.clone(),
            found.item,
        );
        c.bind(Root::Action, action_base.clone());
        (params, c)
    });
    let situ =
        params::bind_situational(&ctx, run.ruleset, found.pack, situational, check_available)?;
    ctx.bind(Root::Situational, situ.values.clone());
    let bound = params::bind_params(
        &ctx,
        run.ruleset,
        found.def,
        found.pack,
        params,
        fixed_ctx.as_ref().map(|(p, c)| (*p, c)),
    )?;
    Ok(Frame {
        id: found.id,
        def: found.def,
        pack: found.pack,
        self_ref: found.self_ref,
        item: found.item,
        entry: found.entry,
        source: found.source,
        pick: found.pick,
        params: bound,
        situational: situ.values,
        selected: situ.selected,
        situational_by_id: situ.by_id,
        participants,
        steps: empty_map(),
        flags: empty_map(),
        nested: empty_map(),
        action_base,
        prefix,
        extra_tags,
        depth,
        held: Vec::new(),
        per_participant: Vec::new(),
    })
}

/// The character's file `id`, as `state.character` names it.
fn character_id(db: &dyn salsa::Database, character: CharacterInput) -> String {
    character.id(db).clone()
}

/// startAction (EA "Starting an action"): runs `input.action` on `character` until it finishes
/// or pauses, replaying `input.answers` first. Faces the policy lets the engine roll come from
/// `dice`. The result is `{ status: finished, outcome, proposedChanges, log }` or `{ status:
/// paused, needs, state, log }`; a failure is the error.
///
/// `db` is the database of `character` (a session's, [`ocf_engine::Session::db`]). A step with
/// `sheet: proposed` derives the proposed character in it, and salsa never frees an input: a
/// session running actions calls [`ocf_engine::Session::reclaim`] after them.
pub fn start_action(
    db: &ocf_engine::Database,
    character: CharacterInput,
    input: &StartInput,
    dice: &mut dyn DiceFunction,
    limits: Limits,
) -> Result<Json, ActionError> {
    let span = tracing::info_span!("startAction", action = %input.action.id);
    let _guard = span.enter();
    on_deep_stack(|| run_call(db, character, input, Vec::new(), dice, limits, None))
}

/// continueAction: the paused action of `state` continued with `answer`, on the same character
/// (`invalid-state` for another's state). It runs the action again from the start with the answers
/// so far and this one, the engine's earlier faces taken again, so the result is what a single
/// startAction with every answer gives.
pub fn continue_action(
    db: &ocf_engine::Database,
    character: CharacterInput,
    input: &ContinueInput,
    dice: &mut dyn DiceFunction,
    limits: Limits,
) -> Result<Json, ActionError> {
    let span = tracing::info_span!("continueAction", action = %input.state.input.action.id);
    let _guard = span.enter();
    let state = &input.state;
    if state.version != state::STATE_VERSION {
        return Err(ActionError::new(
            "invalid-state",
            format!(
                "a state of version {}; this engine reads {}",
                state.version,
                state::STATE_VERSION
            ),
        ));
    }
    let id = character_id(db, character);
    if state.character != id {
        return Err(ActionError::new(
            "invalid-state",
            format!(
                "the state is for character `{}`, not `{id}`",
                state.character
            ),
        ));
    }
    let mut call = state.input.clone();
    call.answers.push(input.answer.clone());
    on_deep_stack(|| {
        run_call(
            db,
            character,
            &call,
            state.rolled.clone(),
            dice,
            limits,
            None,
        )
    })
}

/// Runs a call on a stack of its own, as deep as a session's worker's: an action reads field
/// values on the thread that calls it (a service's has 2 MiB), and checking a chain of
/// `MAX_FIELD_DEPTH` field memos after an edit recurses in salsa itself, where a field value's own
/// guard ([`ocf_engine::field::field_value`]) can't grow the stack. Reserved, not committed: only
/// what the run touches is memory. A caller already on such a stack (a session's worker) runs it
/// where it is: mapping a new one costs about 25 µs a call.
pub(crate) fn on_deep_stack<T>(call: impl FnOnce() -> T) -> T {
    let deep = ocf_engine::session::DEEP_STACK;
    stacker::maybe_grow(deep / 2, deep, call)
}

/// The character an action runs on: `character` without its picks among competing options, which
/// only computeSheet reads (EF "Competing options": "Picks reach only `computeSheet`. The other
/// calls (`listOptions`, `applyChanges`, actions) use each group's recommended option."). A
/// character with picks is derived in `db` without them, its saved values and copies shared; its
/// sheet (the fields the action reads, and its proposed sheets) is its own.
fn without_picks(db: &ocf_engine::Database, character: CharacterInput) -> CharacterInput {
    if character.competing(db).is_empty() {
        return character;
    }
    let mut file = (**ocf_engine::input::held_file(db, character)).clone();
    file.competing.clear();
    character.derive(db, &file)
}

pub(crate) fn run_call<'r>(
    db: &ocf_engine::Database,
    character: CharacterInput,
    input: &StartInput,
    rolled: Vec<i64>,
    dice: &'r mut dyn DiceFunction,
    limits: Limits,
    odds: Option<&'r mut dyn odds::Branch>,
) -> Result<Json, ActionError> {
    let character = without_picks(db, character);
    let ruleset = character.ruleset(db).ruleset(db);
    let a = &input.action;
    // An offer taken up: its action must be the one named.
    let mut clear = None;
    if let Some(follow_up) = &a.follow_up {
        let offers = ocf_engine::offers::offers(db, character);
        let Some(offer) = offers
            .list
            .iter()
            .find(|o| o.id == *follow_up && o.action == a.id)
        else {
            return Err(ActionError::new(
                "unknown-follow-up",
                format!("no offer `{follow_up}` for `{}`", a.id),
            )
            .with("followUp", follow_up.as_str()));
        };
        if offer.kind == ocf_engine::offers::OfferKind::Ephemeral {
            clear = Some(offer.id.clone());
        }
    }
    let found = find::find(
        db,
        character,
        &a.id,
        a.entry.as_deref(),
        a.source.as_deref(),
        true,
    )?;
    let participants = participants::bind(found.def, &input.participants)?;
    let mut checkpoints =
        Checkpoints::new(input.policy.clone(), input.answers.clone(), rolled, dice);
    checkpoints.odds = odds;
    let mut run = Run {
        db,
        character,
        ruleset,
        checkpoints,
        log: Vec::new(),
        proposed: Vec::new(),
        steps_run: 0,
        limits,
        views: participants::call_views(&input.participants),
        sheets: proposed::Sheets::new(input.links.clone()),
    };
    let given: Vec<(String, Given)> = input
        .params
        .iter()
        .map(|(k, v)| (k.clone(), Given::Json(v.clone())))
        .collect();
    let situational = params::situational_json(&input.situational);
    let mut frame = make_frame(
        &run,
        found,
        given,
        &situational,
        participants,
        String::new(),
        1,
        Vec::new(),
        true,
    )?;
    let def = frame.def;
    let flow = run.run_steps(&mut frame, &def.steps, "", None);
    run.sheets.keep_in(db);
    let log = Json::Array(std::mem::take(&mut run.log));
    match flow {
        Ok(flow) => {
            if run.checkpoints.next < run.checkpoints.answers.len() {
                return Err(ActionError::new(
                    "answer-mismatch",
                    format!(
                        "the action finished with {} answers left over",
                        run.checkpoints.answers.len() - run.checkpoints.next
                    ),
                ));
            }
            let outcome = match flow {
                Flow::Done(o) => o,
                Flow::Next => json!({}),
            };
            let mut proposed = std::mem::take(&mut run.proposed);
            if let Some(id) = clear {
                proposed.push(json!({ "to": "self", "step": "", "change": { "type": "clearFollowUp", "id": id } }));
            }
            Ok(json!({
                "status": "finished",
                "outcome": outcome,
                "proposedChanges": proposed,
                "log": log,
            }))
        }
        Err(Stop::Pause(needs)) => {
            let state = State {
                version: state::STATE_VERSION,
                character: character_id(db, character),
                input: input.clone(),
                rolled: run.checkpoints.rolled.clone(),
            };
            Ok(json!({
                "status": "paused",
                "needs": needs,
                "state": serde_json::to_value(&state).unwrap_or_default(),
                "log": log,
            }))
        }
        Err(Stop::Fail(e)) => Err(e),
    }
}
