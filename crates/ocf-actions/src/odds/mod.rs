//! The odds of an action (issue 45): the exact probability of each outcome `result` (and of each
//! participant's, in `each` steps), and the exact distribution and mean of every numeric change
//! the action would propose, before any die is rolled.
//!
//! The action runs as startAction runs it (the same steps, the same roll building), but a roll
//! step doesn't roll: it is split into outcome classes with their exact probabilities
//! ([`classes`]) and the run goes on with one class. A handoff doesn't pause: the participant's own
//! action is worked out the same way on its own character (by the caller's [`Handoffs`]) and the run
//! goes on with one of its outcomes. Every combination of classes is run once, depth first, each
//! run replaying the classes picked before it (the runtime is deterministic given them), and each
//! finished run weighs its result and changes by the product of its classes' probabilities. A
//! choice takes the recommended option (the policy's `choices: auto`) or the given answers.
//!
//! The work is bounded: more than [`MAX_PATHS`] runs or more than [`MAX_CLASSES`] classes at one
//! roll is `distribution-too-large` (the first run's classes multiplied are the estimate, so an
//! action past the bound is refused after one run), and each dice term's
//! distribution spends from `ocf-dice`'s own bound.

pub mod classes;
pub mod handoffs;

use std::collections::{BTreeMap, HashMap};

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use ocf_dice::{DiceError, DiceFunction, FaceRequest};
use ocf_engine::input::CharacterInput;
use serde_json::{Value as Json, json};

use crate::branching::{Branch, Memo, too_large};
use crate::error::ActionError;
use crate::run::Limits;
use crate::state::{StartInput, Then};

/// The most runs (combinations of outcome classes) one answer may take.
pub const MAX_PATHS: usize = 5_000;

/// Answers a handoff for the odds: the participant's action (`needs.run`) worked out on its own
/// character, as [`odds`] works it out ([`Odds::outcomes`]).
pub trait Handoffs {
    fn odds(&mut self, needs: &Json) -> Result<Odds, ActionError>;
}

/// No handoffs: a handoff is refused.
pub struct NoHandoffs;

impl Handoffs for NoHandoffs {
    fn odds(&mut self, needs: &Json) -> Result<Odds, ActionError> {
        Err(ActionError::new(
            "invalid-participants",
            format!(
                "the handoff at `{}` names `{}`, whose character was not given",
                needs["step"].as_str().unwrap_or_default(),
                needs["participant"]["id"].as_str().unwrap_or_default()
            ),
        ))
    }
}

/// One run's picks: the classes picked before (replayed), then the first class of each new one.
struct Paths<'a> {
    script: Vec<usize>,
    /// Each point passed: the class picked, how many there were, and where.
    taken: Vec<(usize, usize)>,
    probability: BigRational,
    memo: &'a mut Memo,
    handoffs: &'a mut dyn Handoffs,
}

impl Branch for Paths<'_> {
    fn choose(&mut self, probabilities: &[BigRational], path: &str) -> Result<usize, ActionError> {
        if probabilities.is_empty() {
            return Err(ActionError::new(
                "unsupported-distribution",
                format!("the roll at `{path}` has no outcome the roller doesn't stop"),
            ));
        }
        let i = self.script.get(self.taken.len()).copied().unwrap_or(0);
        let i = i.min(probabilities.len() - 1);
        self.taken.push((i, probabilities.len()));
        self.probability *= &probabilities[i];
        Ok(i)
    }

    fn handoff(&mut self, needs: &Json) -> Result<Vec<(BigRational, Json)>, ActionError> {
        let key = format!("{}|{}", needs["participant"], needs["run"]);
        if let Some(found) = self.memo.handoffs.get(&key) {
            return Ok(found.clone());
        }
        let odds = self.handoffs.odds(needs)?;
        self.memo.handoffs.insert(key, odds.outcomes.clone());
        Ok(odds.outcomes)
    }

    fn memo(&mut self) -> &mut Memo {
        self.memo
    }
}

/// A dice function that has no faces: the odds never roll (a random draw is not worked out).
struct NoDice;

impl DiceFunction for NoDice {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        Err(DiceError::NoMoreFaces { request: *request })
    }
}

/// One numeric change's distribution: the sum of the `by`s the action proposes to one field of one
/// character, 0 in the runs that propose none.
#[derive(Debug, Clone)]
pub struct ChangeOdds {
    pub to: String,
    pub character: Option<String>,
    pub field: String,
    pub distribution: BTreeMap<BigInt, BigRational>,
}

impl ChangeOdds {
    pub fn mean(&self) -> BigRational {
        self.distribution
            .iter()
            .map(|(v, p)| BigRational::from_integer(v.clone()) * p)
            .sum()
    }
}

/// Each result's probability.
pub type Results = BTreeMap<String, BigRational>;

/// The odds of an action.
#[derive(Debug, Clone, Default)]
pub struct Odds {
    /// Each outcome `result` (`""` for an outcome without one) and its probability.
    pub results: BTreeMap<String, BigRational>,
    /// Each role's participants, in input order: their ID and each result's probability.
    pub participants: BTreeMap<String, Vec<(String, Results)>>,
    pub changes: Vec<ChangeOdds>,
    /// Each distinct outcome (`{ result?, data? }`) and its probability: a handoff's answers.
    pub outcomes: Vec<(BigRational, Json)>,
    /// How many runs it took.
    pub runs: usize,
}

pub use num_rational::BigRational as Probability;

/// A probability or mean as the nearest float.
pub fn float(p: &BigRational) -> f64 {
    ocf_dice::distribution::ratio_to_f64(p)
}

fn number(p: &BigRational) -> Json {
    json!(float(p))
}

fn fraction(p: &BigRational) -> Json {
    if p.is_integer() {
        json!(p.to_integer().to_string())
    } else {
        json!(format!("{}/{}", p.numer(), p.denom()))
    }
}

impl Odds {
    /// The JSON: probabilities and means as numbers.
    pub fn to_json(&self) -> Json {
        self.json_with(&number)
    }

    /// The same with every probability and mean an exact fraction (`"11/20"`).
    pub fn to_exact_json(&self) -> Json {
        self.json_with(&fraction)
    }

    fn json_with(&self, p: &dyn Fn(&BigRational) -> Json) -> Json {
        let results: serde_json::Map<String, Json> = self
            .results
            .iter()
            .map(|(k, v)| (k.clone(), p(v)))
            .collect();
        let participants: serde_json::Map<String, Json> = self
            .participants
            .iter()
            .map(|(role, list)| {
                let list: Vec<Json> = list
                    .iter()
                    .map(|(id, results)| {
                        let results: serde_json::Map<String, Json> =
                            results.iter().map(|(k, v)| (k.clone(), p(v))).collect();
                        json!({ "id": id, "results": results })
                    })
                    .collect();
                (role.clone(), Json::Array(list))
            })
            .collect();
        let changes: Vec<Json> = self
            .changes
            .iter()
            .map(|c| {
                let mut m = serde_json::Map::new();
                m.insert("to".into(), json!(c.to));
                if let Some(ch) = &c.character {
                    m.insert("character".into(), json!(ch));
                }
                m.insert("field".into(), json!(c.field));
                m.insert("mean".into(), p(&c.mean()));
                m.insert(
                    "distribution".into(),
                    Json::Array(
                        c.distribution
                            .iter()
                            .map(|(v, q)| {
                                json!([
                                    v.to_i64()
                                        .map_or_else(|| json!(v.to_string()), |v| json!(v)),
                                    p(q)
                                ])
                            })
                            .collect(),
                    ),
                );
                Json::Object(m)
            })
            .collect();
        let outcomes: Vec<Json> = self
            .outcomes
            .iter()
            .map(|(q, o)| json!([o, p(q)]))
            .collect();
        json!({ "results": results, "participants": participants, "changes": changes, "outcomes": outcomes })
    }
}

/// One finished run.
struct Leaf {
    probability: BigRational,
    result: String,
    outcome: Json,
    /// (role, index) -> result.
    participants: Vec<((String, usize), String)>,
    /// (to, character, field) -> the sum of the `by`s.
    changes: BTreeMap<(String, Option<String>, String), BigInt>,
}

/// A `by` as an integer (an adjust's amounts are whole numbers; a decimal is refused).
fn integer_by(by: &Json) -> Option<BigInt> {
    match by {
        Json::Number(n) => n.as_i64().map(BigInt::from).or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0)
                .map(|f| BigInt::from(f as i64))
        }),
        _ => None,
    }
}

fn leaf(
    probability: BigRational,
    result: &Json,
    input: &StartInput,
    roles: &HashMap<String, String>,
) -> Leaf {
    let outcome = result["outcome"].clone();
    let name = outcome["result"].as_str().unwrap_or_default().to_owned();
    let mut changes: BTreeMap<(String, Option<String>, String), BigInt> = BTreeMap::new();
    for proposed in result["proposedChanges"].as_array().into_iter().flatten() {
        let change = &proposed["change"];
        let Some(by) = integer_by(&change["by"]) else {
            continue;
        };
        let field = change["field"]
            .as_str()
            .or_else(|| change["key"].as_str())
            .or_else(|| change["type"].as_str())
            .unwrap_or_default()
            .to_owned();
        let key = (
            proposed["to"].as_str().unwrap_or("self").to_owned(),
            proposed["character"].as_str().map(str::to_owned),
            field,
        );
        *changes.entry(key).or_default() += by;
    }
    // Each participant's result: its handoff's outcome, or its roll's band, in its `each` run.
    let mut participants: Vec<((String, usize), String)> = Vec::new();
    for entry in result["log"].as_array().into_iter().flatten() {
        let step = entry["step"].as_str().unwrap_or_default();
        let Some((id, rest)) = step.split_once('[') else {
            continue;
        };
        let Some(index) = rest.strip_suffix(']').and_then(|i| i.parse::<usize>().ok()) else {
            continue;
        };
        let role = match entry["participant"]["role"].as_str() {
            Some(r) => r.to_owned(),
            None => match roles.get(id) {
                Some(r) => r.clone(),
                None => continue,
            },
        };
        let got = match entry["kind"].as_str() {
            Some("handoff") => entry["outcome"]["result"].as_str(),
            Some("dice") => entry["band"].as_str(),
            _ => None,
        };
        if let Some(got) = got {
            participants.retain(|(k, _)| *k != (role.clone(), index));
            participants.push(((role, index), got.to_owned()));
        }
    }
    let _ = input;
    Leaf {
        probability,
        result: name,
        outcome,
        participants,
        changes,
    }
}

/// The odds of `input` on `character` (startAction's input; its policy's dice and choices are
/// taken by the odds: every roll branches, every choice takes the recommended option unless an
/// answer gives it). `db` is the character's database, as for [`crate::start_action`].
pub fn odds(
    db: &ocf_engine::Database,
    character: CharacterInput,
    input: &StartInput,
    handoffs: &mut dyn Handoffs,
    limits: Limits,
) -> Result<Odds, ActionError> {
    let span = tracing::info_span!("odds", action = %input.action.id);
    let _guard = span.enter();
    let mut input = input.clone();
    input.policy.dice = Then::Auto;
    input.policy.choices = Then::Auto;
    input.policy.allocations = Then::Auto;
    input.policy.rules.clear();
    let roles = each_roles(db, character, &input);
    let mut memo = Memo::default();
    let mut script: Vec<usize> = Vec::new();
    let mut leaves: Vec<Leaf> = Vec::new();
    loop {
        if leaves.len() >= MAX_PATHS {
            return Err(too_large(format!(
                "the action has more than {MAX_PATHS} combinations of outcomes"
            )));
        }
        let mut paths = Paths {
            script: std::mem::take(&mut script),
            taken: Vec::new(),
            probability: BigRational::one(),
            memo: &mut memo,
            handoffs: &mut *handoffs,
        };
        let mut dice = NoDice;
        let result = crate::run::on_deep_stack(|| {
            crate::run_call(
                db,
                character,
                &input,
                None,
                Vec::new(),
                &mut dice,
                limits,
                Some(&mut paths),
            )
        })?;
        if result["status"].as_str() != Some("finished") {
            let needs = &result["needs"];
            return Err(ActionError::new(
                "unsupported-distribution",
                format!(
                    "the action pauses at `{}` ({}): give the answer (a choice without a recommendation)",
                    needs["step"].as_str().unwrap_or_default(),
                    needs["kind"].as_str().unwrap_or_default()
                ),
            ));
        }
        let (probability, taken) = (paths.probability, paths.taken);
        // The first run's classes multiplied: how many runs the action takes when its later runs
        // pass the same points (refused at once when that is past the bound).
        if leaves.is_empty() {
            let estimate = taken.iter().try_fold(1usize, |acc, (_, n)| {
                acc.checked_mul(*n).filter(|&m| m <= MAX_PATHS)
            });
            if estimate.is_none() {
                return Err(too_large(format!(
                    "the action has more than {MAX_PATHS} combinations of outcomes"
                )));
            }
        }
        leaves.push(leaf(probability, &result, &input, &roles));
        // The next combination: the last point with a class left moves on, the rest start over.
        let Some(k) = taken.iter().rposition(|(i, n)| i + 1 < *n) else {
            break;
        };
        script = taken[..k].iter().map(|(i, _)| *i).collect();
        script.push(taken[k].0 + 1);
    }
    Ok(gather(leaves, &input))
}

/// Each top-level `each` step's role, by step ID.
fn each_roles(
    db: &ocf_engine::Database,
    character: CharacterInput,
    input: &StartInput,
) -> HashMap<String, String> {
    let a = &input.action;
    let Ok(found) = crate::find::find(
        db,
        character,
        &a.id,
        a.entry.as_deref(),
        a.source.as_deref(),
        false,
    ) else {
        return HashMap::new();
    };
    found
        .def
        .steps
        .iter()
        .filter_map(|s| Some((s.id.clone(), s.each.clone()?)))
        .collect()
}

fn gather(leaves: Vec<Leaf>, input: &StartInput) -> Odds {
    let mut odds = Odds {
        runs: leaves.len(),
        ..Odds::default()
    };
    let mut keys: Vec<(String, Option<String>, String)> = Vec::new();
    for l in &leaves {
        for k in l.changes.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut participants: BTreeMap<(String, usize), BTreeMap<String, BigRational>> =
        BTreeMap::new();
    let mut changes: Vec<BTreeMap<BigInt, BigRational>> = vec![BTreeMap::new(); keys.len()];
    for l in &leaves {
        *odds
            .results
            .entry(l.result.clone())
            .or_insert_with(BigRational::zero) += &l.probability;
        match odds.outcomes.iter_mut().find(|(_, o)| *o == l.outcome) {
            Some((p, _)) => *p += &l.probability,
            None => odds
                .outcomes
                .push((l.probability.clone(), l.outcome.clone())),
        }
        for (who, got) in &l.participants {
            *participants
                .entry(who.clone())
                .or_default()
                .entry(got.clone())
                .or_insert_with(BigRational::zero) += &l.probability;
        }
        for (k, dist) in keys.iter().zip(changes.iter_mut()) {
            let v = l.changes.get(k).cloned().unwrap_or_default();
            *dist.entry(v).or_insert_with(BigRational::zero) += &l.probability;
        }
    }
    odds.results.retain(|_, p| p.is_positive());
    for ((role, index), results) in participants {
        let id = input
            .participants
            .get(&role)
            .and_then(|l| l.get(index))
            .and_then(|v| v["id"].as_str())
            .unwrap_or_default()
            .to_owned();
        let list = odds.participants.entry(role).or_default();
        list.push((id, results));
    }
    odds.changes = keys
        .into_iter()
        .zip(changes)
        .map(|((to, character, field), mut distribution)| {
            distribution.retain(|_, p| p.is_positive());
            ChangeOdds {
                to,
                character,
                field,
                distribution,
            }
        })
        .collect();
    odds
}

/// `Session::odds`: the odds of an action on one of a session's open characters.
pub trait SessionOdds {
    fn odds(
        &self,
        id: ocf_engine::CharacterId,
        input: &StartInput,
        handoffs: &mut dyn Handoffs,
    ) -> Result<Odds, ActionError>;
}

impl SessionOdds for ocf_engine::Session {
    fn odds(
        &self,
        id: ocf_engine::CharacterId,
        input: &StartInput,
        handoffs: &mut dyn Handoffs,
    ) -> Result<Odds, ActionError> {
        let db = self
            .db(id)
            .map_err(|e| ActionError::new("unknown-character", e.to_string()))?;
        let character = self
            .character_input(id)
            .ok_or_else(|| ActionError::new("unknown-character", "the character is not open"))?;
        odds(db, character, input, handoffs, Limits::default())
    }
}
