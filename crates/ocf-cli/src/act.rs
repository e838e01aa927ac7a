//! `ocf act CHARACTER ACTION [--entry E] [--source S] [--param k=v…] [--situational k=v…]
//! [--participant ROLE=VIEW.json…] [--policy pause] [--seed N] [--answers FILE] [--json]`: runs an
//! action. At each pause on a terminal it asks (type the faces, or press enter to roll; an
//! option, or enter for the recommended one); without a terminal it takes the answers from the
//! file, then rolls by the seed and takes recommendations. It shows each roll's items and faces,
//! the outcome and the proposed changes (`--json`: the last result as JSON).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use ocf_actions::{Answer, ContinueInput, Limits, StartInput, State};
use ocf_dice::{DiceFunction, FaceReason, FaceRequest, OsDice, SeededDice};
use serde_json::{Value as Json, json};

#[derive(clap::Args)]
pub struct ActArgs {
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
    /// A parameter, `name=value` (the value read as YAML: `dc=15`, `ability=dex`).
    #[arg(long = "param")]
    params: Vec<String>,
    /// A situational choice, `id=value`.
    #[arg(long = "situational")]
    situational: Vec<String>,
    /// Participants of a role, `role=FILE`: a JSON or YAML list of views `{ id, values }`.
    #[arg(long = "participant")]
    participants: Vec<String>,
    /// Pause at every roll too (the default rolls by itself and pauses at choices).
    #[arg(long)]
    pause_dice: bool,
    /// Seeds the engine's dice, so a run can be repeated.
    #[arg(long)]
    seed: Option<u64>,
    /// A YAML or JSON list of answers, taken in order at each pause.
    #[arg(long)]
    answers: Option<PathBuf>,
    #[arg(long = "pack")]
    packs: Vec<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Apply the changes the action proposes for the character itself (`to: self`) through
    /// applyChanges, and write the new file (over CHARACTER, or to `-o`).
    #[arg(long)]
    apply: bool,
    /// With `--apply`: where to write the new file (YAML for `.yaml`/`.yml`, else JSON).
    #[arg(short, long, requires = "apply")]
    output: Option<PathBuf>,
}

fn key_value(text: &str) -> Result<(String, Json), String> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not `name=value`"))?;
    let v: Json = serde_yaml::from_str(v).map_err(|e| format!("`{v}`: {e}"))?;
    Ok((k.to_owned(), v))
}

fn read_yaml(path: &PathBuf) -> Result<Json, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn run(args: ActArgs) -> ExitCode {
    match act(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn act(args: ActArgs) -> Result<ExitCode, String> {
    let file = ocf_cli::character::read(&args.character).map_err(|p| format!("{p:?}"))?;
    let ruleset = ocf_cli::character::ruleset(&args.character, &file, &args.packs)
        .map_err(|p| format!("{p:?}"))?;
    let mut input = StartInput::default();
    input.action.id = args.action.clone();
    input.action.entry = args.entry.clone();
    input.action.source = args.source.clone();
    for p in &args.params {
        let (k, v) = key_value(p)?;
        input.params.insert(k, v);
    }
    for s in &args.situational {
        let (k, v) = key_value(s)?;
        input.situational.insert(k, v);
    }
    for p in &args.participants {
        let (role, path) = p
            .split_once('=')
            .ok_or_else(|| format!("`{p}` is not `role=FILE`"))?;
        input
            .participants
            .insert(role.to_owned(), read_yaml(&PathBuf::from(path))?);
    }
    if args.pause_dice {
        input.policy.dice = ocf_actions::Then::Pause;
    }
    let mut answers: std::collections::VecDeque<Answer> = match &args.answers {
        Some(path) => {
            serde_json::from_value(read_yaml(path)?).map_err(|e| format!("answers: {e}"))?
        }
        None => Default::default(),
    };
    let interactive = std::io::stdin().is_terminal() && args.answers.is_none();
    let mut dice: Box<dyn DiceFunction> = match args.seed {
        Some(seed) => Box::new(SeededDice::new(seed)),
        None => Box::new(OsDice::new()),
    };
    let mut session = ocf_engine::Session::new(ruleset);
    let id = session.open(&file.character, &[]);
    let c = session
        .character_input(id)
        .ok_or("the character did not open")?;
    let db = session.db();
    let mut result = ocf_actions::start_action(db, c, &input, &mut *dice, Limits::default())
        .map_err(|e| e.to_string())?;
    let mut shown = 0;
    while result.get("status").and_then(Json::as_str) == Some("paused") {
        if !args.json {
            shown = show_log(&result, shown);
        }
        let needs = result["needs"].clone();
        let answer = match answers.pop_front() {
            Some(a) => a,
            None if interactive => ask(&needs, &mut *dice)?,
            None => auto_answer(&needs, &mut *dice)?,
        };
        let state: State =
            serde_json::from_value(result["state"].clone()).map_err(|e| e.to_string())?;
        result = ocf_actions::continue_action(
            db,
            c,
            &ContinueInput { state, answer },
            &mut *dice,
            Limits::default(),
        )
        .map_err(|e| e.to_string())?;
        // A continue runs the action from the start: its log repeats what was shown.
    }
    if args.json {
        println!(
            "{}",
            ocf_formula::json_text::to_string_pretty(&result).unwrap_or_default()
        );
    } else {
        show_log(&result, shown);
        show_end(&result);
    }
    if args.apply {
        apply_own(&mut session, id, &result, &mut *dice, &args)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--apply`: the finished action's changes for the character itself, applied as one batch (not
/// strict, as the proposed sheet applies them: EA "The proposed sheet"), the new file written.
/// Changes for other participants are theirs to apply, and are left.
fn apply_own(
    session: &mut ocf_engine::Session,
    id: ocf_engine::CharacterId,
    result: &Json,
    dice: &mut dyn DiceFunction,
    args: &ActArgs,
) -> Result<(), String> {
    if result.get("status").and_then(Json::as_str) != Some("finished") {
        return Err("--apply: the action did not finish".into());
    }
    let own: Vec<Json> = result["proposedChanges"]
        .as_array()
        .into_iter()
        .flatten()
        // EA "The proposed sheet" 1: the character's own changes are those `to: self` with no
        // `character`; changes for a role, a target or a link belong to another character.
        .filter(|p| p["to"] == "self" && p.get("character").is_none())
        .map(|p| p["change"].clone())
        .collect();
    let batch = ocf_engine::changes::read_batch(&Json::Array(own.clone()))
        .map_err(|e| format!("--apply: {}: {}", e.code, e.message))?;
    let options = ocf_engine::ApplyOptions {
        links: Default::default(),
        strict: false,
        dice: Some(dice),
    };
    session
        .apply(id, &batch, options)
        .map_err(|e| format!("--apply: {} at {}: {}", e.code, e.path, e.message))?;
    let file = session.file(id).map_err(|e| e.to_string())?;
    let out = args.output.as_ref().unwrap_or(&args.character);
    let yaml = out.extension().is_some_and(|e| e == "yaml" || e == "yml");
    let text = if yaml {
        serde_yaml::to_string(file).map_err(|e| e.to_string())?
    } else {
        serde_json::to_string_pretty(file).map_err(|e| e.to_string())? + "\n"
    };
    std::fs::write(out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    if !args.json {
        println!(
            "applied {} change(s) for the character; wrote {}",
            own.len(),
            out.display()
        );
    }
    Ok(())
}

/// Rolls the faces a dice pause needs with the engine's dice.
fn roll_faces(needs: &Json, dice: &mut dyn DiceFunction) -> Result<Vec<i64>, String> {
    let mut faces = Vec::new();
    for d in needs["dice"].as_array().into_iter().flatten() {
        let count = d["count"].as_u64().unwrap_or(0);
        let die = match &d["sides"] {
            Json::String(s) if s == "F" => ocf_syntax::dice::Die::Fate,
            n => ocf_syntax::dice::Die::Sides(n.as_u64().unwrap_or(6) as u32),
        };
        for i in 0..count {
            let request = FaceRequest {
                die,
                reason: FaceReason::Initial,
                item: d["item"].as_u64().unwrap_or(0) as usize,
                die_index: i as usize,
            };
            faces.push(dice.face(&request).map_err(|e| format!("{e:?}"))?);
        }
    }
    Ok(faces)
}

fn auto_answer(needs: &Json, dice: &mut dyn DiceFunction) -> Result<Answer, String> {
    match needs["kind"].as_str() {
        Some("dice") => Ok(Answer::faces(roll_faces(needs, dice)?)),
        Some("choice") => match needs["recommended"].as_str() {
            Some(r) => Ok(Answer::option(r)),
            None => Err(format!(
                "step `{}` asks for a choice with no recommendation: give it in --answers",
                needs["step"].as_str().unwrap_or("")
            )),
        },
        other => Err(format!(
            "cannot answer a pause of kind {other:?} without --answers"
        )),
    }
}

fn ask(needs: &Json, dice: &mut dyn DiceFunction) -> Result<Answer, String> {
    let stdin = std::io::stdin();
    let step = needs["step"].as_str().unwrap_or("");
    match needs["kind"].as_str() {
        Some("dice") => {
            let wanted: Vec<String> = needs["dice"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    format!(
                        "{}d{}",
                        d["count"],
                        d["sides"].to_string().trim_matches('"')
                    )
                })
                .collect();
            print!(
                "{step}: roll {} — type the faces, or press enter to roll: ",
                wanted.join(" + ")
            );
            std::io::stdout().flush().ok();
            let mut line = String::new();
            stdin
                .lock()
                .read_line(&mut line)
                .map_err(|e| e.to_string())?;
            let line = line.trim();
            if line.is_empty() {
                return Ok(Answer::faces(roll_faces(needs, dice)?));
            }
            let faces: Result<Vec<i64>, _> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(str::parse)
                .collect();
            Ok(Answer::faces(faces.map_err(|e| format!("faces: {e}"))?))
        }
        Some("choice") => {
            let options: Vec<&str> = needs["options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| o["id"].as_str())
                .collect();
            let recommended = needs["recommended"].as_str();
            println!("{step}: choose one of {}", options.join(", "));
            print!(
                "option{}: ",
                recommended.map(|r| format!(" [{r}]")).unwrap_or_default()
            );
            std::io::stdout().flush().ok();
            let mut line = String::new();
            stdin
                .lock()
                .read_line(&mut line)
                .map_err(|e| e.to_string())?;
            let line = line.trim();
            Ok(Answer::option(if line.is_empty() {
                recommended.unwrap_or_default()
            } else {
                line
            }))
        }
        other => Err(format!("cannot answer a pause of kind {other:?} here")),
    }
}

/// Prints the log entries from `from` on; returns how many there are.
fn show_log(result: &Json, from: usize) -> usize {
    let log = result["log"].as_array().cloned().unwrap_or_default();
    for entry in log.iter().skip(from) {
        let step = entry["step"].as_str().unwrap_or("");
        match entry["kind"].as_str() {
            Some("dice") => {
                let items: Vec<String> = entry["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(show_item)
                    .collect();
                let band = entry["band"]
                    .as_str()
                    .map(|b| format!(" → {b}"))
                    .unwrap_or_default();
                println!("{step}: {} = {}{band}", items.join(" + "), entry["total"]);
            }
            Some("choice") => println!("{step}: picked {} ({})", entry["picked"], entry["by"]),
            _ => println!("{step}: {entry}"),
        }
    }
    log.len()
}

fn show_item(item: &Json) -> String {
    let source = item["source"]["id"].as_str().unwrap_or("");
    match item["kind"].as_str() {
        Some("dice") => {
            let faces: Vec<String> = item["faces"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    let v = f["value"].to_string();
                    if f["kept"] == json!(false) {
                        format!("({v})")
                    } else {
                        v
                    }
                })
                .collect();
            format!(
                "{}d{}[{}] {} ({source})",
                item["count"],
                item["sides"].to_string().trim_matches('"'),
                faces.join(","),
                item["value"]
            )
        }
        _ => format!("{} ({source})", item["value"]),
    }
}

fn show_end(result: &Json) {
    println!("outcome: {}", result["outcome"]);
    let changes = result["proposedChanges"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if changes.is_empty() {
        println!("no changes proposed");
    }
    for c in changes {
        let to = match (&c["to"], c.get("character")) {
            (to, Some(ch)) => format!(
                "{} {}",
                to.as_str().map_or(to.to_string(), str::to_owned),
                ch
            ),
            (to, None) => to.as_str().map_or(to.to_string(), str::to_owned),
        };
        println!("propose to {to}: {}", c["change"]);
    }
}
