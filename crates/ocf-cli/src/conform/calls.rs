//! The engine calls a conformance case can make, each taking the case's input as JSON.

use super::Outcome;
use super::case::Case;
use crate::output::error_body;
use ocf_formula::{Formula, MapContext};
use serde::Deserialize;
use std::path::Path;

/// Carries out the case's call. `Err` is a case that cannot run (unknown call, malformed input),
/// reported as a failure.
pub fn call(case: &Case, dir: &Path) -> Result<Outcome, String> {
    match case.call.as_str() {
        "formula" => formula(&case.input),
        "loadRuleset" => load_ruleset(case, dir),
        "computeSheet" => compute_sheet(case, dir),
        "listOptions" => super::options::list_options(case, dir),
        "startAction" | "continueAction" => super::actions::call(case, dir),
        "applyChanges" => apply_changes(case, dir),
        "upgrade" => upgrade(case, dir),
        "build" => super::texts::build(case, dir),
        "formatText" => super::texts::format_text(case, dir),
        "odds" => super::odds::call(case, dir),
        other => Err(format!("unknown call `{other}`")),
    }
}

/// `formula`: `{ formula, context? }` evaluated as `ocf formula eval` does; the output is the value.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormulaInput {
    formula: String,
    #[serde(default)]
    context: Option<serde_json::Value>,
}

fn formula(input: &serde_json::Value) -> Result<Outcome, String> {
    let input =
        FormulaInput::deserialize(input).map_err(|e| format!("bad `formula` input: {e}"))?;
    let context = match &input.context {
        Some(json) => MapContext::from_json(json).map_err(|e| format!("bad context: {e}"))?,
        None => MapContext::new(),
    };
    let formula = match Formula::parse(&input.formula) {
        Ok(formula) => formula,
        Err(errors) => return Ok(Outcome::Errors(errors.iter().map(error_body).collect())),
    };
    Ok(match formula.evaluate(&context) {
        Ok(value) => Outcome::Output(value.to_json()),
        Err(error) => Outcome::Errors(vec![error_body(&error)]),
    })
}

/// `loadRuleset`: the case's `packs` loaded in order; the output is the ruleset. With `input.character`,
/// the character's homebrew is then loaded on top (the errors are `homebrew-error`s). With
/// `input.evaluate`, each `{ pack, formula }` is evaluated against the loaded ruleset as a formula of
/// that pack (only `fieldOf` has anything to read), and the output gains `evaluated`: each value,
/// or `{ error }` with the formula error's body.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct LoadInput {
    #[serde(default)]
    character: Option<serde_json::Value>,
    #[serde(default)]
    evaluate: Vec<Evaluate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Evaluate {
    pack: String,
    formula: String,
}

/// `evaluate`'s results against `ruleset`.
fn evaluate(ruleset: &ocf_model::Ruleset, formulas: &[Evaluate]) -> serde_json::Value {
    let results = formulas.iter().map(|e| {
        let context = ocf_load::families::FamilyContext {
            ruleset,
            pack: &e.pack,
        };
        let result = Formula::parse(&e.formula)
            .map_err(|errors| errors.first().map(error_body).unwrap_or_default())
            .and_then(|f| f.evaluate(&context).map_err(|error| error_body(&error)));
        match result {
            Ok(value) => value.to_json(),
            Err(body) => serde_json::json!({ "error": body }),
        }
    });
    serde_json::Value::Array(results.collect())
}

fn load_ruleset(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let input = if case.input.is_null() {
        LoadInput::default()
    } else {
        LoadInput::deserialize(&case.input).map_err(|e| format!("bad `loadRuleset` input: {e}"))?
    };
    let character = input
        .character
        .as_ref()
        .map(|c| read_character(c, dir))
        .transpose()?;
    let releases = case
        .packs
        .iter()
        .map(|pack| read_case_pack(pack, dir))
        .collect::<Result<Vec<_>, _>>()?;
    let loaded =
        ocf_load::load_ruleset(&releases, &ocf_load::LoadOptions::default()).and_then(|ruleset| {
            match &character {
                Some(character) => ocf_load::load_homebrew(&ruleset, character),
                None => Ok(ruleset),
            }
        });
    Ok(match loaded {
        Ok(ruleset) => {
            let mut output = serde_json::to_value(&ruleset).map_err(|e| e.to_string())?;
            if !input.evaluate.is_empty()
                && let serde_json::Value::Object(map) = &mut output
            {
                map.insert("evaluated".into(), evaluate(&ruleset, &input.evaluate));
            }
            Outcome::Output(output)
        }
        Err(errors) => Outcome::Errors(
            errors
                .iter()
                .map(|e| serde_json::to_value(e).unwrap_or_default())
                .collect(),
        ),
    })
}

/// A case's character: inline, or the path of a character file (YAML or JSON) relative to the case
/// file, so a case can check a sample character without a copy of it. Read through ocf-model either
/// way, so a typo in an inline character gets its path and nearest key.
pub(super) fn read_character(
    value: &serde_json::Value,
    dir: &Path,
) -> Result<ocf_model::Character, String> {
    match value {
        serde_json::Value::String(path) => {
            let path = dir.join(path);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            ocf_model::from_yaml_str(&text, &path.display().to_string()).map_err(|e| e.to_string())
        }
        inline => ocf_model::from_json_str(&inline.to_string(), "input.character")
            .map_err(|e| e.to_string()),
    }
}

/// A case's pack: a folder or release `.json` relative to the case file, or an inline release.
/// A pack read from a path is built once per run: hundreds of cases name the 5E pack, whose 340
/// files (its SRD monsters) take far longer to build than a case takes to run.
pub(super) fn read_case_pack(
    pack: &serde_json::Value,
    dir: &Path,
) -> Result<ocf_model::PackRelease, String> {
    static BUILT: std::sync::Mutex<
        std::collections::BTreeMap<std::path::PathBuf, ocf_model::PackRelease>,
    > = std::sync::Mutex::new(std::collections::BTreeMap::new());
    match pack {
        serde_json::Value::String(path) => {
            let path = dir.join(path);
            let key = path.canonicalize().unwrap_or_else(|_| path.clone());
            if let Some(release) = BUILT.lock().ok().and_then(|b| b.get(&key).cloned()) {
                return Ok(release);
            }
            let release = ocf_load::source::read_pack(&path)?;
            if let Ok(mut built) = BUILT.lock() {
                built.insert(key, release.clone());
            }
            Ok(release)
        }
        inline => {
            let text = inline.to_string();
            ocf_model::from_json_str(&text, "inline pack").map_err(|e| e.to_string())
        }
    }
}

/// `computeSheet`: `{ character, competing? }` on the case's packs loaded in order; the output is
/// computeSheet's (docs/spec/engine-interface.md). A ruleset that fails to load gives its errors.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SheetInput {
    character: serde_json::Value,
    #[serde(default)]
    competing: Vec<String>,
    #[serde(default)]
    links: serde_json::Map<String, serde_json::Value>,
}

/// What a `computeSheet` case computes: its ruleset, character, competing picks and passed links.
pub struct SheetCall {
    pub ruleset: ocf_model::Ruleset,
    pub character: ocf_model::Character,
    pub competing: Vec<String>,
    pub links: serde_json::Map<String, serde_json::Value>,
}

/// Reads a `computeSheet` case's call; its ruleset's load errors when the packs don't load.
pub fn sheet_call(
    case: &Case,
    dir: &Path,
) -> Result<Result<SheetCall, Vec<ocf_load::LoadErrorRecord>>, String> {
    let input = SheetInput::deserialize(&case.input)
        .map_err(|e| format!("bad `computeSheet` input: {e}"))?;
    let character = read_character(&input.character, dir)?;
    let releases = case
        .packs
        .iter()
        .map(|pack| read_case_pack(pack, dir))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(
        ocf_load::load_ruleset(&releases, &ocf_load::LoadOptions::default()).map(|ruleset| {
            SheetCall {
                ruleset,
                character,
                competing: input.competing,
                links: input.links,
            }
        }),
    )
}

fn compute_sheet(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let call = match sheet_call(case, dir)? {
        Ok(call) => call,
        Err(errors) => {
            return Ok(Outcome::Errors(
                errors
                    .iter()
                    .map(|e| serde_json::to_value(e).unwrap_or_default())
                    .collect(),
            ));
        }
    };
    let sheet = ocf_engine::compute_sheet_call(
        &call.ruleset,
        &call.character,
        &call.competing,
        &call.links,
    );
    // A sheet's `errors` are part of its output; a case states them under `expect`.
    Ok(Outcome::Output(sheet))
}

/// `applyChanges`: `{ character, changes, links?, strict?, faces? }` on the case's packs; `faces`
/// is the dice function (a fixed list of faces; none: no dice function). The output is
/// applyChanges' (docs/spec/engine-interface.md); a failed batch gives its error. Every batch that
/// applies is replayed: its returned batch, applied again to the same character without a dice
/// function, must give the same character, or the case fails.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApplyInput {
    character: serde_json::Value,
    changes: serde_json::Value,
    #[serde(default)]
    links: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    strict: bool,
    #[serde(default)]
    faces: Option<Vec<i64>>,
}

/// The case's packs loaded into a ruleset; a ruleset that does not load is the case's outcome
/// (its load errors), and a pack that does not read a failure of the case.
pub(super) fn case_ruleset(
    case: &Case,
    dir: &Path,
) -> Result<Result<ocf_model::Ruleset, Outcome>, String> {
    let releases = case
        .packs
        .iter()
        .map(|pack| read_case_pack(pack, dir))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(
        ocf_load::load_ruleset(&releases, &ocf_load::LoadOptions::default()).map_err(|errors| {
            Outcome::Errors(
                errors
                    .iter()
                    .map(|e| serde_json::to_value(e).unwrap_or_default())
                    .collect(),
            )
        }),
    )
}

fn apply_changes(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let input = ApplyInput::deserialize(&case.input)
        .map_err(|e| format!("bad `applyChanges` input: {e}"))?;
    let character = read_character(&input.character, dir)?;
    let ruleset = match case_ruleset(case, dir)? {
        Ok(ruleset) => ruleset,
        Err(errors) => return Ok(errors),
    };
    let batch = match ocf_engine::changes::read_batch(&input.changes) {
        Ok(batch) => batch,
        Err(error) => {
            return Ok(Outcome::Errors(vec![
                serde_json::to_value(error).unwrap_or_default(),
            ]));
        }
    };
    let mut faces = input.faces.clone().map(ocf_dice::faces::FixedFaces::new);
    let options = ocf_engine::ApplyOptions {
        links: input.links.clone(),
        strict: input.strict,
        dice: faces
            .as_mut()
            .map(|f| f as &mut dyn ocf_dice::faces::DiceFunction),
    };
    let before = serde_json::to_string(&character).map_err(|e| e.to_string())?;
    let applied = match ocf_engine::apply_changes(&ruleset, &character, &batch, options) {
        Ok(applied) => applied,
        Err(error) => {
            return Ok(Outcome::Errors(vec![
                serde_json::to_value(error).unwrap_or_default(),
            ]));
        }
    };
    if serde_json::to_string(&character).map_err(|e| e.to_string())? != before {
        return Err("applyChanges changed its input character".into());
    }
    let replay = ocf_engine::ApplyOptions {
        links: input.links,
        strict: input.strict,
        dice: None,
    };
    match ocf_engine::apply_changes(&ruleset, &character, &applied.batch, replay) {
        Ok(again) if again.character == applied.character => {}
        Ok(again) => {
            return Err(format!(
                "the returned batch replays to another character: {}",
                serde_json::to_string(&again.character).unwrap_or_default()
            ));
        }
        Err(error) => return Err(format!("the returned batch fails on replay: {error}")),
    }
    Ok(Outcome::Output(applied.to_json()))
}

/// `upgrade`: `{ character }` re-pinned to the case's packs; the output is upgrade's
/// (docs/spec/engine-interface.md, "upgrade"), `{ character, unresolved }`, or the homebrew's error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpgradeInput {
    character: serde_json::Value,
}

fn upgrade(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let input =
        UpgradeInput::deserialize(&case.input).map_err(|e| format!("bad `upgrade` input: {e}"))?;
    let character = read_character(&input.character, dir)?;
    let ruleset = match case_ruleset(case, dir)? {
        Ok(ruleset) => ruleset,
        Err(errors) => return Ok(errors),
    };
    let output = ocf_engine::changes::upgrade::upgrade_json(&ruleset, &character);
    Ok(match output.get("errors").and_then(|e| e.as_array()) {
        Some(errors) => Outcome::Errors(errors.clone()),
        None => Outcome::Output(output),
    })
}
