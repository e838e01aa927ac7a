//! Running the steps (EA "Other steps", "Each steps"): the run's shared state ([`Run`]), one
//! running action ([`Frame`]), and the dispatch to each step kind.

pub mod action;
pub mod allocate;
pub mod branch;
pub mod changes;
pub mod choice;
pub mod draw;
pub mod each;
pub mod pending;
pub mod substitute;

use ocf_engine::context::SelfRef;
use ocf_engine::input::CharacterInput;
use ocf_engine::view::ItemKey;
use ocf_formula::{Root, Value};
use ocf_model::{Action, Results, Ruleset, Step, StepKind};
use serde_json::{Value as Json, json};

use crate::checkpoint::Checkpoints;
use crate::context::{ActionContext, empty_map, set_member};
use crate::error::ActionError;

/// The safety limits of a run (DA "Safety limits"; the values are PROVISIONAL, ours in
/// decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Steps run, each `each` run and each `forEach` copy counted.
    pub max_action_steps: usize,
    /// Nested actions, the started one at depth 1.
    pub max_action_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_action_steps: 10_000,
            max_action_depth: 16,
        }
    }
}

/// Why a run stopped before finishing.
#[derive(Debug)]
pub enum Stop {
    /// A checkpoint needs an answer: the `needs` object.
    Pause(Json),
    Fail(ActionError),
}

impl From<ActionError> for Stop {
    fn from(e: ActionError) -> Stop {
        Stop::Fail(e)
    }
}

/// What a list of steps did.
pub enum Flow {
    Next,
    /// An `outcome` step ended the action: `{ result?, data? }`.
    Done(Json),
}

/// A run: what every action of one call shares.
pub struct Run<'db, 'r> {
    /// The given character's database (a session's): the proposed sheets are derived in it.
    pub db: &'db ocf_engine::Database,
    pub character: CharacterInput,
    pub ruleset: &'db Ruleset,
    pub checkpoints: Checkpoints<'r>,
    pub log: Vec<Json>,
    pub proposed: Vec<Json>,
    pub steps_run: usize,
    pub limits: Limits,
    /// Every participant view the call passes, as the app passed it: a nested action reads its
    /// own declared fields from these.
    pub views: Vec<Json>,
    /// The proposed sheets of `sheet: proposed` steps.
    pub sheets: crate::proposed::Sheets,
}

/// One running action.
pub struct Frame<'db> {
    pub id: String,
    pub def: &'db Action,
    pub pack: &'db str,
    pub self_ref: SelfRef,
    pub item: Option<ItemKey<'db>>,
    pub entry: Option<String>,
    pub source: Option<String>,
    /// The pick that activated the action's content, as a `pick: self` change carries it.
    pub pick: Option<serde_json::Map<String, Json>>,
    pub params: Value,
    pub situational: Value,
    /// Qualified IDs of the selected situational choices.
    pub selected: Vec<String>,
    /// Qualified ID to value, passed on to nested actions.
    pub situational_by_id: Vec<(String, Value)>,
    pub participants: Value,
    pub steps: Value,
    pub flags: Value,
    /// Nested actions' step results by action step ID (`{ steps, nested }`), for `of` paths.
    pub nested: Value,
    /// `action.item` and `action.self`.
    pub action_base: Value,
    /// The path prefix of this action's steps (`check/`), empty for the started one.
    pub prefix: String,
    /// Tags an `action` step adds to every roll and choice step.
    pub extra_tags: Vec<String>,
    pub depth: usize,
    /// Held changes by `hold` step ID.
    pub held: Vec<(String, Vec<Json>)>,
    /// Step results and flags kept per participant by `each` steps.
    pub per_participant: Vec<each::PerParticipant>,
}

/// The current step, as `action.step` and the log name it.
pub struct StepAt<'s> {
    pub step: &'s Step,
    /// The full path (`saves[1]/check`).
    pub path: String,
    /// Inside an `each` run: the participant's view.
    pub participant: Option<Value>,
    /// Inside an `each` run: the role.
    pub role: Option<String>,
    /// Inside an `each` run: the participant's place in the role.
    pub index: Option<usize>,
}

impl<'db> Run<'db, '_> {
    /// The context of a formula in `frame` at `at`: `action.step` is the step's `{ id, tags }`,
    /// its tags evaluated (EA "Starting an action" 5).
    pub fn ctx(&self, frame: &Frame<'db>, at: Option<&StepAt<'db>>) -> ActionContext<'db> {
        let mut ctx = self.ctx_with_tags(frame, at, Vec::new());
        if let Some(at) = at {
            let tags = step_tags(&ctx, self.ruleset, frame, at.step);
            if !tags.is_empty() {
                ctx = self.ctx_with_tags(frame, Some(at), tags);
            }
        }
        ctx
    }

    fn ctx_with_tags(
        &self,
        frame: &Frame<'db>,
        at: Option<&StepAt<'db>>,
        tags: Vec<String>,
    ) -> ActionContext<'db> {
        // On a proposed sheet, `self` is the action's copy as it is there.
        let self_ref = match self.sheets.given {
            Some(given) if given != self.character => {
                crate::proposed::self_on(self.db, &frame.self_ref, self.character)
            }
            _ => frame.self_ref.clone(),
        };
        let mut ctx = ActionContext::new(self.db, self.character, frame.pack, self_ref, frame.item);
        ctx.bind(Root::Params, frame.params.clone());
        ctx.bind(Root::Situational, frame.situational.clone());
        ctx.bind(Root::Participants, frame.participants.clone());
        ctx.bind(Root::Steps, frame.steps.clone());
        ctx.bind(Root::Flags, frame.flags.clone());
        let mut action = frame.action_base.clone();
        if let Some(at) = at {
            set_member(
                &mut action,
                "step",
                Value::map([
                    ("id", Value::string(at.step.id.as_str())),
                    (
                        "tags",
                        Value::list(tags.iter().map(|t| Value::string(t.as_str())).collect()),
                    ),
                ]),
            );
            if let Some(p) = &at.participant {
                ctx.bind(Root::Participant, p.clone());
            }
        }
        ctx.bind(Root::Action, action);
        ctx
    }

    pub(crate) fn count_step(&mut self, path: &str) -> Result<(), ActionError> {
        self.steps_run += 1;
        if self.steps_run > self.limits.max_action_steps {
            return Err(ActionError::new(
                "safety-limit-exceeded",
                format!(
                    "more than {} action steps (maxActionSteps)",
                    self.limits.max_action_steps
                ),
            )
            .with("limit", "maxActionSteps")
            .at(path));
        }
        Ok(())
    }

    /// Runs `steps` of `frame`, their paths under `prefix`.
    pub fn run_steps(
        &mut self,
        frame: &mut Frame<'db>,
        steps: &'db [Step],
        prefix: &str,
        participant: Option<(&str, usize, Value)>,
    ) -> Result<Flow, Stop> {
        for step in steps {
            let path = format!("{prefix}{}", step.id);
            let span = tracing::info_span!("action.step", step = %path, kind = step.kind.name());
            let _guard = span.enter();
            match (&step.each, &participant) {
                (Some(role), None) if step.kind != StepKind::Outcome => {
                    if let Flow::Done(o) = each::run_each(self, frame, step, &path, role)? {
                        return Ok(Flow::Done(o));
                    }
                }
                _ => {
                    let (view, role, index) = match &participant {
                        Some((role, i, view)) => {
                            (Some(view.clone()), Some(role.to_string()), Some(*i))
                        }
                        None => (None, None, None),
                    };
                    let at = StepAt {
                        step,
                        path: path.clone(),
                        participant: view,
                        role,
                        index,
                    };
                    self.count_step(&at.path)?;
                    match self.run_one(frame, &at)? {
                        (Flow::Done(o), _) => return Ok(Flow::Done(o)),
                        (Flow::Next, Some(value)) => set_member(&mut frame.steps, &step.id, value),
                        (Flow::Next, None) => {}
                    }
                }
            }
        }
        Ok(Flow::Next)
    }

    /// One step (one run of an `each` step) on its sheet: the character as given, or with
    /// `sheet: proposed` the proposed sheet (EA "The proposed sheet"), built before its `when`.
    pub(crate) fn run_one(
        &mut self,
        frame: &mut Frame<'db>,
        at: &StepAt<'db>,
    ) -> Result<(Flow, Option<Value>), Stop> {
        let given = *self.sheets.given.get_or_insert(self.character);
        let before = self.character;
        self.character = match at.step.sheet {
            Some(ocf_model::Sheet::Proposed) => self
                .sheets
                .build(self.db, &self.proposed, &at.path)
                .map_err(|e| Stop::Fail(e.at(&at.path)))?,
            _ => given,
        };
        let r = self.run_step(frame, at);
        self.character = before;
        r
    }

    /// The character the step reads now: for `sheet: proposed`, rebuilt (a choice's next pick).
    pub fn rebuild(&mut self, at: &StepAt<'db>) -> Result<(), ActionError> {
        if at.step.sheet == Some(ocf_model::Sheet::Proposed) {
            self.character = self
                .sheets
                .build(self.db, &self.proposed, &at.path)
                .map_err(|e| e.at(&at.path))?;
        }
        Ok(())
    }

    /// One step (one run of an `each` step): its flow and its result, `None` when it has none
    /// (skipped, or a kind without a result).
    fn run_step(
        &mut self,
        frame: &mut Frame<'db>,
        at: &StepAt<'db>,
    ) -> Result<(Flow, Option<Value>), Stop> {
        let step = at.step;
        if let Some(when) = &step.when {
            let ctx = self.ctx(frame, Some(at));
            if !ctx.condition(when.as_str()).map_err(|e| e.at(&at.path))? {
                return Ok((Flow::Next, None));
            }
        }
        let fail_at = |s: Stop| match s {
            Stop::Fail(e) => Stop::Fail(e.at(&at.path)),
            pause => pause,
        };
        match step.kind {
            StepKind::Roll => {
                let r = crate::roll::roll_step(self, frame, at).map_err(fail_at)?;
                Ok((Flow::Next, r))
            }
            StepKind::Branch => branch::run(self, frame, at)
                .map(|f| (f, None))
                .map_err(fail_at),
            StepKind::Changes => {
                changes::run(self, frame, at).map_err(|e| Stop::Fail(e.at(&at.path)))?;
                Ok((Flow::Next, None))
            }
            StepKind::Action => action::run(self, frame, at).map_err(fail_at),
            StepKind::Choice => choice::run(self, frame, at).map_err(fail_at),
            StepKind::Outcome => {
                let outcome = outcome(self, frame, at).map_err(|e| e.at(&at.path))?;
                Ok((Flow::Done(outcome), None))
            }
            StepKind::Allocate => allocate::run(self, frame, at).map_err(fail_at),
        }
    }
}

/// Each pick of a repeated choice past the first counts toward maxActionSteps, as a `forEach`
/// copy does: a `repeat` max from the pack is untrusted.
pub fn count_pick(run: &mut Run<'_, '_>, path: &str, made: usize) -> Result<(), ActionError> {
    if made == 0 {
        return Ok(());
    }
    run.count_step(path)
}

/// An `outcome` step: `result` (a string) and `data`, checked against the action's `results`.
fn outcome<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
) -> Result<Json, ActionError> {
    let ctx = run.ctx(frame, Some(at));
    let mut out = serde_json::Map::new();
    if let Some(result) = &at.step.result {
        let value = ctx.eval(result.as_str())?;
        let Value::String(text) = &value else {
            return Err(ActionError::new(
                "type-mismatch",
                format!(
                    "an outcome's result is a string, not a {}",
                    value.type_name()
                ),
            ));
        };
        check_result(run.ruleset, frame, text)?;
        out.insert("result".into(), json!(text.as_ref()));
    }
    if !at.step.data.is_empty() {
        let mut data = serde_json::Map::new();
        for (key, formula) in at.step.data.iter() {
            data.insert(key.to_owned(), data_json(&ctx.eval(formula.as_str())?));
        }
        out.insert("data".into(), Json::Object(data));
    }
    Ok(Json::Object(out))
}

/// `undeclared-result`: a result the action's `results` doesn't list.
pub fn check_result(ruleset: &Ruleset, frame: &Frame<'_>, result: &str) -> Result<(), ActionError> {
    if declares_result(ruleset, frame.def, frame.pack, result) {
        Ok(())
    } else {
        Err(ActionError::new(
            "undeclared-result",
            format!("the action doesn't declare `{result}`"),
        )
        .with("result", result))
    }
}

/// Whether `def` (of `pack`) may finish with `result`: any when it declares no `results`.
pub fn declares_result(ruleset: &Ruleset, def: &Action, pack: &str, result: &str) -> bool {
    match &def.results {
        None => true,
        Some(Results::List(list)) => list.iter().any(|r| r == result),
        Some(Results::Bands { bands }) => {
            crate::roll::classify::band_set(ruleset, pack, bands.as_str())
                .is_some_and(|(_, set)| set.decl.bands.iter().any(|b| b.id == result))
        }
    }
}

/// A value as data reports it: JSON, a dice value in dice notation.
pub fn data_json(value: &Value) -> Json {
    match value {
        Value::Dice(d) => json!(d.to_string()),
        Value::List(l) => Json::Array(l.iter().map(data_json).collect()),
        Value::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.to_string(), data_json(v)))
                .collect(),
        ),
        other => other.to_json(),
    }
}

/// The evaluated tags of a tag list: literal ones as written, `{ formula }` ones spread, no
/// repeats; an undeclared computed tag is `unknown-tag`.
pub fn eval_tags(
    ctx: &ActionContext<'_>,
    ruleset: &Ruleset,
    entries: &[ocf_model::TagEntry],
    out: &mut Vec<String>,
) -> Result<(), ActionError> {
    for entry in entries {
        match entry {
            ocf_model::Computed::Literal(tag) => push_tag(out, tag.as_str()),
            ocf_model::Computed::Formula { formula } => {
                let value = ctx.eval(formula.as_str())?;
                let tags: Vec<String> = match &value {
                    Value::String(s) => vec![s.to_string()],
                    Value::List(l) if l.iter().all(|v| matches!(v, Value::String(_))) => l
                        .iter()
                        .filter_map(|v| match v {
                            Value::String(s) => Some(s.to_string()),
                            _ => None,
                        })
                        .collect(),
                    other => {
                        return Err(ActionError::new(
                            "type-mismatch",
                            format!(
                                "a computed tag is a string or a list of strings, not a {}",
                                other.type_name()
                            ),
                        ));
                    }
                };
                for tag in tags {
                    if !ruleset.tags.iter().any(|t| t.as_str() == tag) {
                        return Err(ActionError::new(
                            "unknown-tag",
                            format!("the computed tag `{tag}` isn't declared"),
                        )
                        .with("tag", tag));
                    }
                    push_tag(out, &tag);
                }
            }
        }
    }
    Ok(())
}

/// A step's evaluated tags as `action.step.tags` shows them: its own, then, for roll, choice and
/// changes steps, those the `action` steps running this action add (EA "Other steps", action,
/// `tags`; changes content adds). Allocate steps don't get those. A tag formula that fails gives
/// the literal tags only: the step itself evaluates its tags and reports the error.
pub fn step_tags(
    ctx: &ActionContext<'_>,
    ruleset: &Ruleset,
    frame: &Frame<'_>,
    step: &Step,
) -> Vec<String> {
    let mut tags = Vec::new();
    if eval_tags(ctx, ruleset, &step.tags, &mut tags).is_err() {
        tags.clear();
        for entry in &step.tags {
            if let ocf_model::Computed::Literal(tag) = entry {
                push_tag(&mut tags, tag.as_str());
            }
        }
    }
    if matches!(
        step.kind,
        StepKind::Roll | StepKind::Choice | StepKind::Changes
    ) {
        for t in &frame.extra_tags {
            push_tag(&mut tags, t);
        }
    }
    tags
}

fn push_tag(out: &mut Vec<String>, tag: &str) {
    if !out.iter().any(|t| t == tag) {
        out.push(tag.to_owned());
    }
}

/// Reads a map value's members as a list of pairs.
pub fn pairs(value: &Value) -> Vec<(String, Value)> {
    match value {
        Value::Map(m) => m.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        _ => Vec::new(),
    }
}

pub fn empty() -> Value {
    empty_map()
}
