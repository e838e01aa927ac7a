//! The `odds` call of the conformance runner (issue 45): `{ character, action, params?,
//! situational?, participants?, answers? }`, startAction's input, where a participant may also be
//! the path of a character file (relative to the case): its view is read from its own computed
//! sheet, and a handoff to it runs its action on it. The output is the odds with every
//! probability and mean an exact fraction (`"11/20"`), so cases compare exactly; with `digits: N`,
//! numbers rounded to N decimals.

use super::Outcome;
use super::calls::{case_ruleset, read_character};
use super::case::Case;
use ocf_actions::odds::SessionOdds;
use ocf_actions::odds::handoffs::Characters;
use ocf_actions::{Answer, StartInput};
use serde::Deserialize;
use serde_json::Value as Json;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OddsInput {
    character: Json,
    action: Json,
    #[serde(default)]
    params: serde_json::Map<String, Json>,
    #[serde(default)]
    situational: serde_json::Map<String, Json>,
    #[serde(default)]
    participants: serde_json::Map<String, Json>,
    #[serde(default)]
    answers: Vec<Answer>,
    /// Probabilities and means as numbers rounded to this many decimals instead of fractions
    /// (for dice whose exact fractions carry the cut-off of a safety limit, `1d6!`).
    #[serde(default)]
    digits: Option<usize>,
}

pub fn call(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let input =
        OddsInput::deserialize(&case.input).map_err(|e| format!("bad `odds` input: {e}"))?;
    let ruleset = match case_ruleset(case, dir)? {
        Ok(ruleset) => ruleset,
        Err(errors) => return Ok(errors),
    };
    let mut session = ocf_engine::Session::new(ruleset);
    let actor = session.open(&read_character(&input.character, dir)?, &[]);
    // Participants given as files: opened beside the actor, each remembered by its file's id.
    let mut opened = Vec::new();
    let mut roles: Vec<(String, Vec<Result<Json, String>>)> = Vec::new();
    for (role, list) in &input.participants {
        let mut entries = Vec::new();
        for entry in list.as_array().into_iter().flatten() {
            match entry {
                Json::String(path) => {
                    let character = read_character(entry, dir)?;
                    let id = character.id.to_string();
                    let cid = session.open(&character, &[]);
                    opened.push((id.clone(), cid));
                    let _ = path;
                    entries.push(Err(id));
                }
                view => entries.push(Ok(view.clone())),
            }
        }
        roles.push((role.clone(), entries));
    }
    let mut handoffs = Characters::new(
        opened
            .iter()
            .map(|(id, cid)| (id.clone(), &session, *cid))
            .collect(),
    );
    let mut start = StartInput {
        action: serde_json::from_value(input.action).map_err(|e| format!("action: {e}"))?,
        params: input.params,
        situational: input.situational,
        answers: input.answers,
        ..StartInput::default()
    };
    for (role, entries) in roles {
        let mut views = Vec::new();
        for entry in entries {
            views.push(match entry {
                Ok(view) => view,
                Err(id) => handoffs.view(&id).map_err(|e| e.to_string())?,
            });
        }
        start.participants.insert(role, Json::Array(views));
    }
    match session.odds(actor, &start, &mut handoffs) {
        Ok(odds) => Ok(Outcome::Output(match input.digits {
            None => odds.to_exact_json(),
            Some(d) => rounded(odds.to_json(), d),
        })),
        Err(e) => Ok(Outcome::Errors(vec![e.to_json()])),
    }
}

/// Every float of `value` rounded to `digits` decimals (integers as they are).
fn rounded(value: Json, digits: usize) -> Json {
    match value {
        Json::Number(n) if n.is_f64() => {
            let text = format!("{:.*}", digits, n.as_f64().unwrap_or_default());
            serde_json::json!(text.parse::<f64>().unwrap_or_default())
        }
        Json::Array(list) => Json::Array(list.into_iter().map(|v| rounded(v, digits)).collect()),
        Json::Object(map) => Json::Object(
            map.into_iter()
                .map(|(k, v)| (k, rounded(v, digits)))
                .collect(),
        ),
        other => other,
    }
}
