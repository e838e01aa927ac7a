//! `ocf act CHARACTER ACTION [--entry E] [--source S] [--param k=v…] [--situational k=v…]
//! [--participant ROLE=CHARACTER…] [--policy pause] [--seed N] [--answers FILE] [--json]`: runs an
//! action. At each pause on a terminal it asks (type the faces, or press enter to roll; an
//! option, or enter for the recommended one); without a terminal it takes the answers from the
//! file, then rolls by the seed and takes recommendations. A handoff runs the participant's
//! action on its own character file, in the same process ([`cast`]). It shows each roll's items
//! and faces, the outcome and the proposed changes (`--json`: the last result as JSON).

pub(crate) mod cast;
mod words;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use ocf_actions::{Answer, ContinueInput, Limits, StartInput, State};
use ocf_dice::{DiceFunction, FaceReason, FaceRequest, OsDice, SeededDice};
use serde_json::{Value as Json, json};

/// What names one run of an action, shared by `ocf act` and `ocf odds`: the character, the
/// action, its parameters, situational choices, participants and answers.
#[derive(clap::Args)]
pub struct CallArgs {
    /// The character file (YAML or JSON).
    pub(crate) character: PathBuf,
    /// The action's ID as the sheet lists it (`5e-srd-5.1:weapon-attack`).
    pub(crate) action: String,
    /// The copy (instance ID) the action runs on.
    #[arg(long)]
    pub(crate) entry: Option<String>,
    /// The content the action comes from, for picked or granted content.
    #[arg(long)]
    pub(crate) source: Option<String>,
    /// A parameter, `name=value` (the value read as YAML: `dc=15`, `ability=dex`).
    #[arg(long = "param")]
    pub(crate) params: Vec<String>,
    /// A situational choice, `id=value`.
    #[arg(long = "situational")]
    pub(crate) situational: Vec<String>,
    /// A participant, `role=CHARACTER` (repeat it for more, in order): a character file, whose
    /// view is read from its own computed sheet, or a JSON or YAML list of views `{ id, values }`.
    #[arg(long = "participant")]
    pub(crate) participants: Vec<String>,
    /// A YAML or JSON list of answers, taken in order at each pause.
    #[arg(long)]
    pub(crate) answers: Option<PathBuf>,
    #[arg(long = "pack")]
    pub(crate) packs: Vec<PathBuf>,
}

impl CallArgs {
    /// The startAction input these arguments name, the participants given as files opened in
    /// `cast` (their views read from their own computed sheets), `--param`s the action doesn't
    /// declare refused. The answers are read apart ([`CallArgs::answers`]).
    pub(crate) fn start_input(&self, cast: &mut cast::Cast) -> Result<StartInput, String> {
        let mut input = StartInput::default();
        input.action.id = self.action.clone();
        input.action.entry = self.entry.clone();
        input.action.source = self.source.clone();
        for p in &self.params {
            let (k, v) = key_value(p)?;
            input.params.insert(k, v);
        }
        for s in &self.situational {
            let (k, v) = key_value(s)?;
            input.situational.insert(k, v);
        }
        for p in &self.participants {
            let (role, path) = p
                .split_once('=')
                .ok_or_else(|| format!("`{p}` is not `role=CHARACTER`"))?;
            let path = PathBuf::from(path);
            // A list is views as the app would pass them; anything else is a character file.
            // Both are read within the character files' limits.
            let views = match ocf_cli::character::read_data::<Json>(&path) {
                Ok(Json::Array(views)) => views,
                Ok(_) => {
                    let member = cast.open(&path, &self.packs)?;
                    vec![cast.view(member)?]
                }
                Err(problem) => return Err(problem_text(&problem)),
            };
            let list = input
                .participants
                .entry(role.to_owned())
                .or_insert_with(|| Json::Array(Vec::new()));
            if let Json::Array(list) = list {
                list.extend(views);
            }
        }
        check_params(cast, &input)?;
        Ok(input)
    }

    /// The `--answers` file's answers, in order (none without the flag).
    pub(crate) fn answers(&self) -> Result<Vec<Answer>, String> {
        match &self.answers {
            Some(path) => {
                ocf_cli::character::read_data::<Vec<Answer>>(path).map_err(|p| problem_text(&p))
            }
            None => Ok(Vec::new()),
        }
    }
}

#[derive(clap::Args)]
pub struct ActArgs {
    #[command(flatten)]
    call: CallArgs,
    /// Pause at every roll too (the default rolls by itself and pauses at choices).
    #[arg(long)]
    pause_dice: bool,
    /// Seeds the engine's dice, so a run can be repeated.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Apply the changes the action proposes for each character (itself, `to: self`, and each
    /// participant given as a file) through that character's applyChanges, and write each new
    /// file (over its own, or the actor's to `-o`).
    #[arg(long)]
    apply: bool,
    /// With `--apply`: where to write the new file (YAML for `.yaml`/`.yml`, else JSON).
    #[arg(short, long, requires = "apply")]
    output: Option<PathBuf>,
}

/// `name=value`, the value read as YAML. A number that isn't finite (`.nan`, `.inf`) has no JSON
/// form and is refused, as the engine refuses it anywhere else.
fn key_value(text: &str) -> Result<(String, Json), String> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not `name=value`"))?;
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(v).map_err(|e| format!("invalid-value: `{v}`: {e}"))?;
    if let Some(n) = yaml.as_f64()
        && !n.is_finite()
    {
        return Err(format!(
            "invalid-value: `{text}`: `{v}` is not a finite number"
        ));
    }
    let v: Json = serde_json::to_value(&yaml).map_err(|e| format!("invalid-value: `{v}`: {e}"))?;
    Ok((k.to_owned(), v))
}

/// A file's read problem as `file:line:col: code: message` with the line shown.
fn problem_text(problem: &ocf_load::build::Problem) -> String {
    problem.headline(std::path::Path::new(""))
}

/// `--param`s the action doesn't declare are refused, naming the declared ones: the engine
/// ignores them, and a misspelt `targetAC` would silently run without its target.
fn check_params(cast: &cast::Cast, input: &StartInput) -> Result<(), String> {
    let session = cast.session(0);
    let cid = cast.members[0].cid;
    let (Ok(db), Some(c)) = (session.db(cid), session.character_input(cid)) else {
        return Ok(());
    };
    // An action the character doesn't list is the engine's `unknown-action` to report.
    let Ok(found) = ocf_actions::find::find(
        db,
        c,
        &input.action.id,
        input.action.entry.as_deref(),
        input.action.source.as_deref(),
        true,
    ) else {
        return Ok(());
    };
    let declared: Vec<&str> = found.def.params.iter().map(|(k, _)| k).collect();
    for name in input.params.keys() {
        if !declared.contains(&name.as_str()) {
            let list = if declared.is_empty() {
                "none".to_owned()
            } else {
                declared.join(", ")
            };
            return Err(format!(
                "unknown-param: `{}` declares no parameter `{name}` (it declares: {list})",
                input.action.id
            ));
        }
    }
    Ok(())
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
    let mut cast = cast::Cast::new(&args.call.character, &args.call.packs)?;
    words::set(cast.session(0).ruleset());
    let mut input = args.call.start_input(&mut cast)?;
    if args.pause_dice {
        input.policy.dice = ocf_actions::Then::Pause;
    }
    let mut answers: std::collections::VecDeque<Answer> = args.call.answers()?.into();
    let interactive = std::io::stdin().is_terminal() && args.call.answers.is_none();
    let mut dice: Box<dyn DiceFunction> = match args.seed {
        Some(seed) => Box::new(SeededDice::new(seed)),
        None => Box::new(OsDice::new()),
    };
    let mut driver = Driver {
        cast: &mut cast,
        answers: &mut answers,
        dice: &mut *dice,
        interactive,
        quiet: args.json,
    };
    let result = driver.drive(0, &input, "", 0)?;
    // An answer no pause took is a mismatch, as continueAction says of one given to a finished
    // run (`ocf serve` too): the file was written for another run.
    if !answers.is_empty() {
        return Err(format!(
            "answer-mismatch: {} answer(s) of --answers left over after the action finished",
            answers.len()
        ));
    }
    if args.json {
        println!(
            "{}",
            ocf_formula::json_text::to_string_pretty(&result).unwrap_or_default()
        );
    } else {
        show_end(&result);
    }
    if args.apply {
        if result.get("status").and_then(Json::as_str) != Some("finished") {
            return Err("--apply: the action did not finish".into());
        }
        cast.collect(0, &result);
        for (path, n) in cast.apply_all(&mut *dice, args.output.as_deref())? {
            if !args.json {
                println!("applied {n} change(s); wrote {}", path.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs actions to the end: the started one, and each handoff's on its participant's character.
struct Driver<'a> {
    cast: &'a mut cast::Cast,
    answers: &'a mut std::collections::VecDeque<Answer>,
    dice: &'a mut dyn DiceFunction,
    interactive: bool,
    quiet: bool,
}

/// How deep handoffs may hand off in turn: a participant whose action hands back to the actor,
/// and so on, ends here rather than never.
const MAX_HANDOFF_DEPTH: usize = 8;

impl Driver<'_> {
    /// Runs `input` on member `who` until it finishes, answering each pause: a handoff by running
    /// the participant's action on its own character when the cast has it (its changes filed
    /// under it for `--apply`), any other pause from the answers, the terminal or the dice.
    fn drive(
        &mut self,
        who: usize,
        input: &StartInput,
        indent: &str,
        depth: usize,
    ) -> Result<Json, String> {
        let m = &self.cast.members[who];
        let (cid, session) = (m.cid, self.cast.session(who));
        let c = session
            .character_input(cid)
            .ok_or("the character did not open")?;
        let mut result = ocf_actions::start_action(
            session.db(cid).map_err(|e| e.to_string())?,
            c,
            input,
            &mut *self.dice,
            Limits::default(),
        )
        .map_err(|e| e.to_string())?;
        let mut shown = 0;
        while result.get("status").and_then(Json::as_str) == Some("paused") {
            if !self.quiet {
                shown = show_log(&result, shown, indent);
            }
            let needs = result["needs"].clone();
            let answer = match needs["kind"].as_str() {
                Some("handoff") if self.handoff_member(&needs).is_some() => {
                    self.handoff(&needs, indent, depth)?
                }
                _ => match self.answers.pop_front() {
                    Some(a) => a,
                    None if self.interactive => ask(&needs, &mut *self.dice)?,
                    None => auto_answer(&needs, &mut *self.dice)?,
                },
            };
            let state: State =
                serde_json::from_value(result["state"].clone()).map_err(|e| e.to_string())?;
            let session = self.cast.session(who);
            result = ocf_actions::continue_action(
                session.db(cid).map_err(|e| e.to_string())?,
                c,
                &ContinueInput { state, answer },
                &mut *self.dice,
                Limits::default(),
            )
            .map_err(|e| e.to_string())?;
            // A continue runs the action from the start: its log repeats what was shown.
        }
        if !self.quiet {
            show_log(&result, shown, indent);
        }
        Ok(result)
    }

    /// The member a handoff names, when its character file was given.
    fn handoff_member(&self, needs: &Json) -> Option<usize> {
        self.cast.find(needs["participant"]["id"].as_str()?)
    }

    /// EA "Handoffs" 4: `run.action` on the participant's own character, with `run.params` and a
    /// view of each character `run.participants` names (from its own computed sheet); the
    /// answer is the finished outcome.
    fn handoff(&mut self, needs: &Json, indent: &str, depth: usize) -> Result<Answer, String> {
        let who = self.handoff_member(needs).ok_or("no participant")?;
        if depth >= MAX_HANDOFF_DEPTH {
            return Err(format!(
                "handoffs nested deeper than {MAX_HANDOFF_DEPTH} at `{}`",
                needs["step"].as_str().unwrap_or("")
            ));
        }
        let run = &needs["run"];
        let mut input = StartInput::default();
        input.action.id = run["action"].as_str().unwrap_or_default().to_owned();
        input.params = run["params"].as_object().cloned().unwrap_or_default();
        for (role, ids) in run["participants"].as_object().into_iter().flatten() {
            let mut views = Vec::new();
            for id in ids.as_array().into_iter().flatten() {
                let id = id.as_str().unwrap_or_default();
                let m = self.cast.find(id).ok_or_else(|| {
                    format!("the handoff names `{id}`, whose character file was not given")
                })?;
                views.push(self.cast.view(m)?);
            }
            input.participants.insert(role.clone(), Json::Array(views));
        }
        if !self.quiet {
            println!(
                "{indent}{}: {} runs {}",
                needs["step"].as_str().unwrap_or(""),
                self.cast.members[who].id,
                input.action.id
            );
        }
        let inner = format!("{indent}  ");
        // The participant's run checks its params on its own sheet (a field parameter's `where`:
        // `invalid-option`); its failure is reported at the handoff that asked for it.
        let result = self.drive(who, &input, &inner, depth + 1).map_err(|e| {
            format!(
                "{e} (in {}'s own run of {}, handed off at step `{}`)",
                self.cast.members[who].id,
                input.action.id,
                needs["step"].as_str().unwrap_or("")
            )
        })?;
        self.cast.collect(who, &result);
        let outcome = result["outcome"].as_object().cloned().unwrap_or_default();
        if !self.quiet {
            println!("{inner}outcome: {}", Json::Object(outcome.clone()));
        }
        Ok(Answer {
            step: needs["step"].as_str().map(str::to_owned),
            outcome: Some(outcome),
            ..Answer::default()
        })
    }
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
            let recommended = needs["recommended"].as_str();
            let action = needs["action"].as_str().unwrap_or_default();
            if let Some(prompt) = words::prompt(action, step) {
                println!("{step}: {prompt}");
            }
            let named: Vec<String> = needs["options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| {
                    Some(format!(
                        "{}{}",
                        o["id"].as_str()?,
                        words::paren(words::option(action, o))
                    ))
                })
                .collect();
            println!("{step}: choose one of {}", named.join(", "));
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

/// Prints the log entries from `from` on, each line after `indent`; returns how many there are.
fn show_log(result: &Json, from: usize, indent: &str) -> usize {
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
                    .map(|b| format!(" → {b}{}", words::band(entry)))
                    .unwrap_or_default();
                println!(
                    "{indent}{step}: {} = {}{band}",
                    items.join(" + "),
                    entry["total"]
                );
            }
            Some("choice") => {
                let action = entry["action"].as_str().unwrap_or_default();
                let name = entry["picked"]
                    .as_str()
                    .and_then(|id| words::option(action, &json!({ "id": id })));
                println!(
                    "{indent}{step}: picked {}{} ({})",
                    entry["picked"],
                    words::paren(name),
                    entry["by"]
                )
            }
            Some("handoff") => println!(
                "{indent}{step}: {} answered {}",
                entry["participant"]["id"].as_str().unwrap_or(""),
                entry["outcome"]
            ),
            _ => println!("{indent}{step}: {entry}"),
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
    if let Some(code) = result["outcome"]["result"].as_str() {
        let log = result["log"].as_array().cloned().unwrap_or_default();
        let action = log
            .first()
            .and_then(|e| e["action"].as_str())
            .unwrap_or_default();
        let set = log.iter().rev().find_map(|e| e["bandSet"].as_str());
        if let Some(name) = words::result(action, set, code) {
            println!("result: {name}");
        }
    }
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
