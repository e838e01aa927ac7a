//! `ocf odds CHARACTER ACTION [--entry E] [--source S] [--param k=v…] [--situational k=v…]
//! [--participant ROLE=FILE…] [--answers FILE] [--json]`: the odds of an action (issue 45), before
//! any die is rolled: the exact probability of each outcome result (and each participant's), and
//! the exact distribution and mean of every numeric change it would propose. A participant given
//! as a character file has its view read from its own computed sheet, and a handoff to it is worked
//! out on its own character, as `ocf act` runs it.

use std::process::ExitCode;

use ocf_actions::odds::handoffs::Characters;
use ocf_actions::odds::{Odds, SessionOdds};
use serde_json::Value as Json;

use crate::act::CallArgs;
use crate::act::cast::Cast;

#[derive(clap::Args)]
pub struct OddsArgs {
    #[command(flatten)]
    call: CallArgs,
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

/// A refusal of the command line's own as `{code, message}`: the code its text starts with
/// (`unknown-param: …`), else `invalid-input`.
fn message(text: String) -> Json {
    let code = text
        .split_once(": ")
        .map(|(code, _)| code)
        .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-'));
    match code {
        Some(code) => serde_json::json!({ "code": code, "message": text[code.len() + 2..] }),
        None => serde_json::json!({ "code": "invalid-input", "message": text }),
    }
}

fn odds(args: &OddsArgs) -> Result<Odds, Json> {
    let call = &args.call;
    let mut cast = Cast::new(&call.character, &call.packs).map_err(message)?;
    let mut input = call.start_input(&mut cast).map_err(message)?;
    input.answers = call.answers().map_err(message)?;
    let mut handoffs = Characters::new(
        cast.members
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, m)| (m.id.clone(), cast.session(i), m.cid))
            .collect(),
    );
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
