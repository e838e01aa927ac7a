//! Choice steps over pending choices (DA "Choice steps", `{ pending: { entry? } }`): the choices
//! still pending on the proposed character, in `pending`'s order, one per pick, each with its
//! eligible options as listOptions gives them, then `#done`. Each pick proposes the `choose` and
//! the step's `changes`; the step goes on until nothing more can be picked. Both the pending list
//! and listOptions are asked of the run's session holding the proposed character
//! ([`crate::proposed::Sheets::session`]).

use ocf_engine::options::path::{ChoicePath, segment_text};
use ocf_formula::{Root, Value};
use ocf_model::StepRecommend;
use serde_json::{Value as Json, json};

use crate::error::ActionError;
use crate::run::{Flow, Frame, Run, StepAt, Stop};
use crate::state::Then;

/// A pending choice asked: its path, `choice` (`{ path, owner, id }`), eligible options and its
/// own recommendation as listOptions gives it.
struct Asked {
    path: Json,
    choice: Json,
    options: Vec<(String, ocf_model::Literal)>,
    own: Option<String>,
}

pub fn run<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    tags: &[crate::tag::Tag],
    entry: Option<String>,
) -> Result<(Flow, Option<Value>), Stop> {
    let mut picked: Vec<Value> = Vec::new();
    let mut paths: Vec<Value> = Vec::new();
    let mut asked_any = false;
    loop {
        crate::run::count_pick(run, &at.path, picked.len())?;
        let Some(asked) = next(run, at, entry.as_deref())? else {
            break;
        };
        asked_any = true;
        let index = picked.len();
        let recommended = match &at.step.recommend {
            Some(StepRecommend::Option(f)) => {
                let mut ctx = run.ctx(frame, Some(at));
                ctx.bind(
                    Root::Choice,
                    Value::from_json(&asked.choice).unwrap_or_default(),
                );
                ctx.bind(
                    Root::Options,
                    Value::list(
                        asked
                            .options
                            .iter()
                            .map(|(id, _)| Value::string(id.as_str()))
                            .collect(),
                    ),
                );
                match ctx.eval(f.as_str())? {
                    Value::String(s) if asked.options.iter().any(|(id, _)| *id == *s) => {
                        Some(s.to_string())
                    }
                    _ => None,
                }
            }
            // DA: "without it the choice's own recommendation applies".
            _ => asked.own.clone(),
        };
        let decision = run.checkpoints.decide("choice", tags, &at.path);
        let (option, by) = match (decision, &recommended) {
            (Then::Auto, Some(r)) => (r.clone(), "engine"),
            _ => match run.checkpoints.take_answer() {
                None => {
                    let mut options: Vec<Json> = asked
                        .options
                        .iter()
                        .map(|(id, _)| json!({ "id": id }))
                        .collect();
                    options.push(json!({ "id": DONE }));
                    let mut need = serde_json::Map::new();
                    need.insert("kind".into(), json!("choice"));
                    need.insert("step".into(), json!(at.path));
                    need.insert("action".into(), json!(frame.id));
                    need.insert("choice".into(), asked.choice.clone());
                    need.insert("options".into(), Json::Array(options));
                    if let Some(r) = &recommended {
                        need.insert("recommended".into(), json!(r));
                    }
                    need.insert("index".into(), json!(index));
                    return Err(Stop::Pause(Json::Object(need)));
                }
                Some(answer) => {
                    let option = crate::replay::expect_answer(answer, "choice", &at.path)?
                        .option
                        .clone()
                        .unwrap_or_default();
                    if option != DONE && !asked.options.iter().any(|(id, _)| *id == option) {
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
        run.log.push(json!({
            "step": at.path, "action": frame.id, "kind": "choice", "by": by, "picked": option,
            "index": index, "choice": asked.choice,
        }));
        if option == DONE {
            break;
        }
        let literal = asked
            .options
            .iter()
            .find(|(id, _)| *id == option)
            .map(|(_, l)| l.clone())
            .expect("among the options");
        let path_value = Value::from_json(&asked.path).unwrap_or_default();
        // The choose, then the step's changes with `picked` `{ id, path }`.
        let text = crate::run::literal_text(
            &Value::from_json(&literal_json(&literal)).unwrap_or_default(),
        )?;
        let choose = json!({ "type": "choose", "path": asked.path, "option": text });
        run.proposed
            .push(json!({ "to": "self", "step": at.path, "change": choose }));
        let picked_value = Value::map([
            ("id", Value::string(option.as_str())),
            ("path", path_value.clone()),
        ]);
        if !at.step.changes.is_empty() {
            super::changes::propose(run, frame, at, &at.step.changes, None, Some(&picked_value))?;
        }
        picked.push(Value::string(option.as_str()));
        paths.push(path_value);
    }
    if !asked_any {
        // Nothing was pending: the step is skipped.
        return Ok((Flow::Next, None));
    }
    Ok((
        Flow::Next,
        Some(Value::map([
            ("picked", Value::list(picked)),
            ("paths", Value::list(paths)),
        ])),
    ))
}

fn literal_json(l: &ocf_model::Literal) -> Json {
    serde_json::to_value(l).unwrap_or(Json::Null)
}

/// The first pending choice (of `entry`'s copy, when given) with an eligible option not picked.
fn next(
    run: &mut Run<'_, '_>,
    at: &StepAt<'_>,
    entry: Option<&str>,
) -> Result<Option<Asked>, ActionError> {
    let db = run.db;
    let (session, id) = run.sheets.session(db, &run.proposed, &at.path)?;
    let sheet = session
        .sheet(id)
        .map_err(|e| ActionError::new("proposed-changes-failed", e.to_string()))?;
    let pending: Vec<Json> = sheet.pending().to_vec();
    let choices: Vec<Json> = sheet.choices().to_vec();
    for p in pending {
        let path = p["path"].clone();
        if let Some(entry) = entry
            && path["entry"].as_str() != Some(entry)
        {
            continue;
        }
        let Ok(choice_path) = ChoicePath::from_json(&path) else {
            continue;
        };
        let Ok(listed) = session.list_options(id, &choice_path) else {
            continue;
        };
        let options: Vec<(String, ocf_model::Literal)> = listed
            .options
            .iter()
            .filter(|o| o.eligible && !o.picked)
            .map(|o| (segment_text(&o.option), o.option.clone()))
            .collect();
        if options.is_empty() {
            continue;
        }
        let record = choices.iter().find(|c| c["path"] == path);
        let choice = json!({
            "path": path,
            "owner": record.map(|c| c["owner"].clone()).unwrap_or(Json::Null),
            "id": record.map(|c| c["id"].clone()).unwrap_or(Json::Null),
        });
        let own = listed
            .recommended
            .as_ref()
            .map(segment_text)
            .filter(|r| options.iter().any(|(id, _)| id == r));
        return Ok(Some(Asked {
            path,
            choice,
            options,
            own,
        }));
    }
    Ok(None)
}

/// The reserved option that ends a repeated choice.
pub const DONE: &str = "#done";
