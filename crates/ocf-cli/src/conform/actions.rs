//! The `startAction` and `continueAction` calls of the conformance runner.
//!
//! Both take `{ character, action, params?, situational?, policy?, participants?, links?,
//! answers?, faces?, seed? }`: `faces` are the dice function's faces in order (running out is the
//! error `no-more-faces`), else `seed` seeds it (default 0). `continueAction` also takes
//! `continue: [answer, …]`: the action is started, then continued with each answer in turn from
//! the state the previous result returned, read back from its JSON text; its output is the last
//! result. The runner also replays every answer through one startAction and fails the case when
//! that result isn't byte for byte the same (EA: "replaying from answers MUST give the same
//! result").

use super::Outcome;
use super::calls::{case_ruleset, read_character};
use super::case::Case;
use ocf_actions::{Answer, ContinueInput, Limits, StartInput, State};
use ocf_dice::{DiceError, DiceFunction, FaceRequest, FixedFaces, SeededDice};
use serde::Deserialize;
use serde_json::Value as Json;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ActionInput {
    character: Json,
    #[serde(flatten)]
    call: StartInputFields,
    #[serde(default)]
    faces: Option<Vec<i64>>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default, rename = "continue")]
    continue_with: Vec<Answer>,
}

/// startAction's fields, read as the call reads them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartInputFields {
    action: Json,
    #[serde(default)]
    params: serde_json::Map<String, Json>,
    #[serde(default)]
    situational: serde_json::Map<String, Json>,
    #[serde(default)]
    policy: Option<Json>,
    #[serde(default)]
    links: serde_json::Map<String, Json>,
    #[serde(default)]
    participants: serde_json::Map<String, Json>,
    #[serde(default)]
    answers: Vec<Json>,
}

/// The case's dice function: fixed faces, else seeded.
enum Dice {
    Fixed(FixedFaces),
    Seeded(SeededDice),
}

impl DiceFunction for Dice {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        match self {
            Dice::Fixed(f) => f.face(request),
            Dice::Seeded(s) => s.face(request),
        }
    }
}

fn error_outcome(e: &ocf_actions::ActionError) -> Outcome {
    Outcome::Errors(vec![e.to_json()])
}

pub fn call(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let input = ActionInput::deserialize(&case.input)
        .map_err(|e| format!("bad `{}` input: {e}", case.call))?;
    let character = read_character(&input.character, dir)?;
    let ruleset = match case_ruleset(case, dir)? {
        Ok(ruleset) => ruleset,
        Err(errors) => return Ok(errors),
    };
    let fields = &input.call;
    let start_json = serde_json::json!({
        "action": fields.action,
        "params": fields.params,
        "situational": fields.situational,
        "policy": fields.policy.clone().unwrap_or(serde_json::json!({})),
        "links": fields.links,
        "participants": fields.participants,
        "answers": fields.answers,
    });
    let start: StartInput =
        serde_json::from_value(start_json).map_err(|e| format!("bad startAction input: {e}"))?;
    let mut session = ocf_engine::Session::new(ruleset);
    let id = session.open(&character, &[]);
    let _ = session.set_links(id, fields.links.clone());
    let c = session
        .character_input(id)
        .ok_or("the character did not open")?;
    let dice = || match (&input.faces, input.seed) {
        (Some(f), _) => Dice::Fixed(FixedFaces::new(f.clone())),
        (None, seed) => Dice::Seeded(SeededDice::new(seed.unwrap_or(0))),
    };
    let db = session.db(id).map_err(|e| e.to_string())?;
    // One dice function for the start and every continue: each call asks it only for faces no
    // earlier call rolled (those are in the state).
    let mut dice_fn = dice();
    let mut result = match ocf_actions::start_action(db, c, &start, &mut dice_fn, Limits::default())
    {
        Ok(r) => r,
        Err(e) => return Ok(error_outcome(&e)),
    };
    if case.call == "continueAction" {
        for answer in &input.continue_with {
            let Some(state) = result.get("state") else {
                return Err(format!(
                    "the action finished before every `continue` answer was given: {result}"
                ));
            };
            // The state goes through its JSON text, as another process would read it.
            let text = serde_json::to_string(state).map_err(|e| e.to_string())?;
            let state: State = serde_json::from_str(&text).map_err(|e| format!("state: {e}"))?;
            let cont = ContinueInput {
                state,
                answer: answer.clone(),
            };
            result =
                match ocf_actions::continue_action(db, c, &cont, &mut dice_fn, Limits::default()) {
                    Ok(r) => r,
                    Err(e) => return Ok(error_outcome(&e)),
                };
        }
        // The replay: every answer through one startAction, the dice function fresh.
        let mut replay = start.clone();
        replay.answers.extend(input.continue_with.iter().cloned());
        if result.get("status").and_then(Json::as_str) == Some("finished") {
            let again = ocf_actions::start_action(db, c, &replay, &mut dice(), Limits::default())
                .map_err(|e| format!("the replay failed: {e}"))?;
            let (a, b) = (again.to_string(), result.to_string());
            if a != b {
                return Err(format!(
                    "replaying from the answers gave another result:\n  continued: {b}\n  replayed:  {a}"
                ));
            }
        }
    }
    Ok(Outcome::Output(result))
}
