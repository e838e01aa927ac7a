//! `ocf odds CHARACTER ACTION [--entry E] [--source S] [--param k=v…] [--situational k=v…]
//! [--participant ROLE=FILE…] [--answers FILE] [--json]`: the odds of an action (issue 45), before
//! any die is rolled: the exact probability of each outcome result (and each participant's), and
//! the exact distribution and mean of every numeric change it would propose. A participant given
//! as a character file has its view read from its own computed sheet, and a handoff to it is worked
//! out on its own character, as `ocf act` runs it.

use std::path::PathBuf;
use std::process::ExitCode;

use ocf_actions::odds::handoffs::Characters;
use ocf_actions::odds::{Odds, SessionOdds};
use ocf_actions::{Answer, StartInput};
use serde_json::Value as Json;

use crate::act::cast::Cast;
use crate::act::{key_value, read_yaml};

#[derive(clap::Args)]
pub struct OddsArgs {
    /// The character file (YAML or JSON).
    character: PathBuf,
    /// The action's ID as the sheet lists it (`5e-srd-5.1:weapon-attack`).
    action: String,
    /// The copy (instance ID) the action runs on.
    #[arg(long)]
    entry: Option<String>,
    /// The content the action comes from, for picked or granted content.
    #[arg(long)]
    source: Option<String>,
    /// A parameter, `name=value` (the value read as YAML).
    #[arg(long = "param")]
    params: Vec<String>,
    /// A situational choice, `id=value`.
    #[arg(long = "situational")]
    situational: Vec<String>,
    /// A participant, `role=CHARACTER` (repeat it for more, in order): a character file, or a
    /// JSON or YAML list of views `{ id, values }`.
    #[arg(long = "participant")]
    participants: Vec<String>,
    /// A YAML or JSON list of answers for the action's pauses (else choices take the recommended
    /// option).
    #[arg(long)]
    answers: Option<PathBuf>,
    #[arg(long = "pack")]
    packs: Vec<PathBuf>,
    /// Print the odds as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: OddsArgs) -> ExitCode {
    match odds(&args) {
        Ok(odds) => {
            if args.json {
                println!(
                    "{}",
                    ocf_formula::json_text::to_string_pretty(&odds.to_json()).unwrap_or_default()
                );
            } else {
                show(&odds);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if args.json {
                println!("{}", serde_json::json!({ "error": e }));
            } else {
                eprintln!(
                    "ocf: {}: {}",
                    e["code"].as_str().unwrap_or("error"),
                    e["message"].as_str().unwrap_or_default()
                );
            }
            ExitCode::FAILURE
        }
    }
}

fn message(text: String) -> Json {
    serde_json::json!({ "code": "invalid-input", "message": text })
}

fn odds(args: &OddsArgs) -> Result<Odds, Json> {
    let mut cast = Cast::new(&args.character, &args.packs).map_err(message)?;
    let mut input = StartInput::default();
    input.action.id = args.action.clone();
    input.action.entry = args.entry.clone();
    input.action.source = args.source.clone();
    for p in &args.params {
        let (k, v) = key_value(p).map_err(message)?;
        input.params.insert(k, v);
    }
    for s in &args.situational {
        let (k, v) = key_value(s).map_err(message)?;
        input.situational.insert(k, v);
    }
    let mut roles: Vec<(String, Vec<Result<Json, usize>>)> = Vec::new();
    for p in &args.participants {
        let (role, path) = p
            .split_once('=')
            .ok_or_else(|| message(format!("`{p}` is not `role=CHARACTER`")))?;
        let path = PathBuf::from(path);
        let entries: Vec<Result<Json, usize>> = match read_yaml(&path) {
            Ok(Json::Array(views)) => views.into_iter().map(Ok).collect(),
            _ => vec![Err(cast.open(&path, &args.packs).map_err(message)?)],
        };
        match roles.iter_mut().find(|(r, _)| r == role) {
            Some((_, list)) => list.extend(entries),
            None => roles.push((role.to_owned(), entries)),
        }
    }
    if let Some(path) = &args.answers {
        let answers: Vec<Answer> = serde_json::from_value(read_yaml(path).map_err(message)?)
            .map_err(|e| message(format!("answers: {e}")))?;
        input.answers = answers;
    }
    let mut handoffs = Characters::new(
        cast.members
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, m)| (m.id.clone(), cast.session(i), m.cid))
            .collect(),
    );
    for (role, entries) in roles {
        let mut views = Vec::new();
        for entry in entries {
            views.push(match entry {
                Ok(view) => view,
                Err(member) => cast.view(member).map_err(message)?,
            });
        }
        input.participants.insert(role, Json::Array(views));
    }
    let actor = &cast.members[0];
    cast.session(0)
        .odds(actor.cid, &input, &mut handoffs)
        .map_err(|e| e.to_json())
}

fn percent(p: &ocf_actions::odds::Probability) -> String {
    format!("{:.2} %", ocf_actions::odds::float(p) * 100.0)
}

fn show(odds: &Odds) {
    println!("results:");
    for (result, p) in &odds.results {
        let name = if result.is_empty() { "(none)" } else { result };
        println!("  {name}: {}", percent(p));
    }
    for (role, list) in &odds.participants {
        for (id, results) in list {
            let parts: Vec<String> = results
                .iter()
                .map(|(r, p)| format!("{r} {}", percent(p)))
                .collect();
            println!("{role} {id}: {}", parts.join(", "));
        }
    }
    for c in &odds.changes {
        let who = match &c.character {
            Some(ch) => format!("{} {ch}", c.to),
            None => c.to.clone(),
        };
        println!(
            "{who} {}: mean {:.3}",
            c.field,
            ocf_actions::odds::float(&c.mean())
        );
        let parts: Vec<String> = c
            .distribution
            .iter()
            .map(|(v, p)| format!("{v}: {}", percent(p)))
            .collect();
        println!("  {}", parts.join(", "));
    }
    println!("({} runs)", odds.runs);
}
