//! OCF actions at run time: `startAction` and `continueAction` (engine-actions.md, EA;
//! dice-and-actions.md, DA), above ocf-engine's sheets.
//!
//! An action is [`find`]-ed among the character's listed actions, its [`params`], situational
//! choices and [`participants`] bound, and its steps run ([`steps`], [`roll`]) against the sheet
//! ocf-engine computes, with [`context::ActionContext`] as every formula's context. A checkpoint
//! ([`checkpoint`]) either continues by itself or pauses; the paused result carries `needs` and a
//! plain-JSON [`state::State`], and [`continue_action`] runs the action again from the start with
//! the answers so far ([`replay`]), so a replay gives the same result byte for byte.
//!
//! Layered, each below the next: [`run`] (the run-time types every step reaches for: [`run::Run`],
//! [`run::Frame`], [`run::Stop`]; EA "Starting an action"), then [`roll`] (EA "Building the roll",
//! "Rolling", "Result bands") and [`steps`] (EA "Other steps", "Each steps", "Choice steps",
//! "Handoffs"; one module a step kind), [`branching`] what the odds ask of a run and [`odds`]
//! (issue 45) on top. `cargo test -p ocf-modules` checks that no module imports its way back.

pub mod branching;
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
pub mod run;
pub mod state;
pub mod steps;
pub mod tag;

use ocf_dice::DiceFunction;
use ocf_engine::input::CharacterInput;
use serde_json::{Value as Json, json};

pub use crate::error::ActionError;
pub use crate::run::Limits;
pub use crate::state::{
    ActionRef, Answer, ContinueInput, Policy, PolicyRule, StartInput, State, Then,
};

use crate::checkpoint::Checkpoints;
use crate::params::Given;
use crate::run::{Flow, Run, Stop, make_frame, on_deep_stack};

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
    on_deep_stack(|| run_call(db, character, input, None, Vec::new(), dice, limits, None))
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
    on_deep_stack(|| {
        run_call(
            db,
            character,
            &state.input,
            Some(&input.answer),
            state.rolled.clone(),
            dice,
            limits,
            None,
        )
    })
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

/// A JSON object of `members`, moved in.
fn object<const N: usize>(members: [(&str, Json); N]) -> Json {
    Json::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// Runs `input`'s action with its answers, then `answer` (a continue's).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_call<'r>(
    db: &ocf_engine::Database,
    character: CharacterInput,
    input: &'r StartInput,
    answer: Option<&'r Answer>,
    rolled: Vec<i64>,
    dice: &'r mut dyn DiceFunction,
    limits: Limits,
    odds: Option<&'r mut dyn crate::branching::Branch>,
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
    let answers = input.answers.iter().chain(answer).collect();
    let mut checkpoints = Checkpoints::new(&input.policy, answers, rolled, dice);
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
            // Built by moving the parts in: `json!` would copy each through the serializer.
            Ok(object([
                ("status", json!("finished")),
                ("outcome", outcome),
                ("proposedChanges", Json::Array(proposed)),
                ("log", log),
            ]))
        }
        Err(Stop::Pause(needs)) => {
            // The state's input: this call's, its answers all it took.
            let mut input = input.clone();
            input.answers.extend(answer.cloned());
            let state = State {
                version: state::STATE_VERSION,
                character: character_id(db, character),
                input,
                rolled: run.checkpoints.rolled.clone(),
            };
            Ok(object([
                ("status", json!("paused")),
                ("needs", needs),
                ("state", serde_json::to_value(&state).unwrap_or_default()),
                ("log", log),
            ]))
        }
        Err(Stop::Fail(e)) => Err(e),
    }
}
