//! The run-time types every step reaches for (EA "Starting an action", "Other steps"): the
//! run's shared state ([`Run`]), one running action ([`Frame`]) and how it is built
//! ([`make_frame`]), the current step ([`StepAt`]), why a run stops ([`Stop`]) and its limits
//! ([`Limits`]), with the small helpers on values and tags that `roll/` and `steps/` share. It
//! sits below both: they import it, it imports neither.

use ocf_engine::context::SelfRef;
use ocf_engine::input::CharacterInput;
use ocf_engine::view::ItemKey;
use ocf_formula::Value;
use ocf_model::{Action, Ruleset, Step, StepKind};
use serde_json::{Value as Json, json};

use crate::checkpoint::Checkpoints;
use crate::context::{ActionContext, empty_map, set_member};
use crate::error::ActionError;
use crate::find;
use crate::params::Given;
use crate::tag::Tag;

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
    pub extra_tags: Vec<Tag>,
    pub depth: usize,
    /// Held changes by `hold` step ID.
    pub held: Vec<(String, Vec<Json>)>,
    /// Step results and flags kept per participant by `each` steps.
    pub per_participant: Vec<PerParticipant>,
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

/// Which map a per-participant value lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    Steps,
    Flags,
    Nested,
}

/// A step result or flag set per participant of `role`: `list` is the value the map holds
/// outside the runs (null where a participant has none). A later step that replaces the map's
/// value (a flag set without `each`) makes the record stale, so it is only used while the map
/// still holds `list`.
#[derive(Debug, Clone)]
pub struct PerParticipant {
    pub root: Root,
    pub name: String,
    pub role: String,
    pub list: Value,
}

impl<'db> Run<'db, '_> {
    /// The context of a formula in `frame` at `at`: `action.step` is the step's `{ id, tags }`,
    /// its tags evaluated (EA "Starting an action" 5).
    pub fn ctx(&self, frame: &Frame<'db>, at: Option<&StepAt<'db>>) -> ActionContext<'db> {
        // Literal tags need no context: the step's `action` is made with them.
        if let Some(at) = at
            && at
                .step
                .tags
                .iter()
                .all(|t| matches!(t, ocf_model::Computed::Literal(_)))
        {
            return self.ctx_with_tags(frame, Some(at), literal_tags(frame, at.step), true);
        }
        let mut ctx = self.ctx_with_tags(frame, at, Vec::new(), true);
        if let Some(at) = at {
            // The tags are worked out in the context without them, then set in its `action`.
            let (tags, own) = match own_tags(&ctx, self.ruleset, frame, at.step) {
                Ok(tags) => (tags, true),
                Err(_) => (literal_tags(frame, at.step), false),
            };
            ctx.step_action = Some(crate::context::StepAction::new(
                frame.action_base.clone(),
                &at.step.id,
                tags,
                own,
            ));
        }
        ctx
    }

    fn ctx_with_tags(
        &self,
        frame: &Frame<'db>,
        at: Option<&StepAt<'db>>,
        tags: Vec<Tag>,
        own: bool,
    ) -> ActionContext<'db> {
        // On a proposed sheet, `self` is the action's copy as it is there.
        let self_ref = match self.sheets.given {
            Some(given) if given != self.character => {
                crate::proposed::self_on(self.db, &frame.self_ref, self.character)
            }
            _ => frame.self_ref.clone(),
        };
        let mut ctx = ActionContext::in_ruleset(
            self.db,
            self.character,
            self.ruleset,
            frame.pack,
            self_ref,
            frame.item,
        );
        // An action's roots and a step's: reserved once.
        ctx.reserve_roots(8);
        ctx.bind(ocf_formula::Root::Params, frame.params.clone());
        ctx.bind(ocf_formula::Root::Situational, frame.situational.clone());
        ctx.bind(ocf_formula::Root::Participants, frame.participants.clone());
        ctx.bind(ocf_formula::Root::Steps, frame.steps.clone());
        ctx.bind(ocf_formula::Root::Flags, frame.flags.clone());
        match at {
            Some(at) => {
                if let Some(p) = &at.participant {
                    ctx.bind(ocf_formula::Root::Participant, p.clone());
                }
                ctx.step_action = Some(crate::context::StepAction::new(
                    frame.action_base.clone(),
                    &at.step.id,
                    tags,
                    own,
                ));
            }
            None => ctx.bind(ocf_formula::Root::Action, frame.action_base.clone()),
        }
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
}

/// Builds the frame of an action about to run: its `action.item` / `action.self`, parameters and
/// situational choices.
#[allow(clippy::too_many_arguments)]
pub fn make_frame<'db>(
    run: &Run<'db, '_>,
    found: find::Found<'db>,
    params: Vec<(String, Given)>,
    situational: &[(String, Value)],
    participants: Value,
    prefix: String,
    depth: usize,
    extra_tags: Vec<Tag>,
    check_available: bool,
) -> Result<Frame<'db>, ActionError> {
    let mut ctx = ActionContext::new(
        run.db,
        run.character,
        found.pack,
        found.self_ref.clone(),
        found.item,
    );
    let mut action_base = empty_map();
    if let Some(item) = ctx.item_value() {
        set_member(&mut action_base, "item", item);
    }
    if let Some(s) = ctx.self_value() {
        set_member(&mut action_base, "self", s);
    }
    ctx.bind(ocf_formula::Root::Action, action_base.clone());
    ctx.bind(ocf_formula::Root::Participants, participants.clone());
    let fixed_ctx = found.fixed.map(|(params, pack)| {
        let mut c = ActionContext::new(
            run.db,
            run.character,
            pack,
            found.self_ref.clone(),
            found.item,
        );
        c.bind(ocf_formula::Root::Action, action_base.clone());
        (params, c)
    });
    let situ = crate::params::bind_situational(
        &ctx,
        run.ruleset,
        found.pack,
        situational,
        check_available,
    )?;
    ctx.bind(ocf_formula::Root::Situational, situ.values.clone());
    let bound = crate::params::bind_params(
        &ctx,
        run.ruleset,
        found.def,
        found.pack,
        params,
        fixed_ctx.as_ref().map(|(p, c)| (*p, c)),
    )?;
    Ok(Frame {
        id: found.id,
        def: found.def,
        pack: found.pack,
        self_ref: found.self_ref,
        item: found.item,
        entry: found.entry,
        source: found.source,
        pick: found.pick,
        params: bound,
        situational: situ.values,
        selected: situ.selected,
        situational_by_id: situ.by_id,
        participants,
        steps: empty_map(),
        flags: empty_map(),
        nested: empty_map(),
        action_base,
        prefix,
        extra_tags,
        depth,
        held: Vec::new(),
        per_participant: Vec::new(),
    })
}

/// Runs a call on a stack of its own, as deep as a session's worker's: an action reads field
/// values on the thread that calls it (a service's has 2 MiB), and checking a chain of
/// `MAX_FIELD_DEPTH` field memos after an edit recurses in salsa itself, where a field value's own
/// guard ([`ocf_engine::field::field_value`]) can't grow the stack. Reserved, not committed: only
/// what the run touches is memory. A caller already on such a stack (a session's worker) runs it
/// where it is: mapping a new one costs about 25 µs a call.
pub fn on_deep_stack<T>(call: impl FnOnce() -> T) -> T {
    let deep = ocf_engine::session::DEEP_STACK;
    stacker::maybe_grow(deep / 2, deep, call)
}

/// Each pick of a repeated choice past the first counts toward maxActionSteps, as a `forEach`
/// copy does: a `repeat` max from the pack is untrusted.
pub fn count_pick(run: &mut Run<'_, '_>, path: &str, made: usize) -> Result<(), ActionError> {
    if made == 0 {
        return Ok(());
    }
    run.count_step(path)
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
    out: &mut Vec<Tag>,
) -> Result<(), ActionError> {
    for entry in entries {
        match entry {
            ocf_model::Computed::Literal(tag) => push_tag(out, tag.as_str()),
            ocf_model::Computed::Formula { formula } => {
                let value = ctx.eval(formula.as_str())?;
                let tags: &[Value] = match &value {
                    Value::String(_) => std::slice::from_ref(&value),
                    Value::List(l) if l.iter().all(|v| matches!(v, Value::String(_))) => l,
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
                    let Value::String(tag) = tag else { continue };
                    if !declared(ruleset, tag) {
                        return Err(ActionError::new(
                            "unknown-tag",
                            format!("the computed tag `{tag}` isn't declared"),
                        )
                        .with("tag", &**tag));
                    }
                    if !out.iter().any(|t| **t == **tag) {
                        out.push(tag.clone());
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether the ruleset declares `tag`: its tags are sorted (the load sorts them), else looked
/// through one by one.
fn declared(ruleset: &Ruleset, tag: &str) -> bool {
    ruleset
        .tags
        .binary_search_by(|t| t.as_str().cmp(tag))
        .is_ok()
        || ruleset.tags.iter().any(|t| t.as_str() == tag)
}

/// A step's evaluated tags, then those the `action` steps running the action add (roll, choice and
/// changes steps): what the step itself rolls or proposes with, its tag formulas' errors its own.
pub fn own_tags(
    ctx: &ActionContext<'_>,
    ruleset: &Ruleset,
    frame: &Frame<'_>,
    step: &Step,
) -> Result<Vec<Tag>, ActionError> {
    let mut tags = Vec::new();
    eval_tags(ctx, ruleset, &step.tags, &mut tags)?;
    push_added_tags(frame, step, &mut tags);
    Ok(tags)
}

/// [`own_tags`], read from the step's context when it made them.
pub fn ctx_own_tags(
    ctx: &ActionContext<'_>,
    ruleset: &Ruleset,
    frame: &Frame<'_>,
    step: &Step,
) -> Result<std::rc::Rc<[Tag]>, ActionError> {
    match ctx.step_action.as_ref().and_then(|a| a.own_tags()) {
        Some(tags) => Ok(tags),
        None => own_tags(ctx, ruleset, frame, step).map(Into::into),
    }
}

/// The step's literal tags, then those the `action` steps running the action add: [`step_tags`]
/// of a step whose tags are all literal, or whose tag formula fails.
fn literal_tags(frame: &Frame<'_>, step: &Step) -> Vec<Tag> {
    let mut tags = Vec::new();
    for entry in &step.tags {
        if let ocf_model::Computed::Literal(tag) = entry {
            push_tag(&mut tags, tag.as_str());
        }
    }
    push_added_tags(frame, step, &mut tags);
    tags
}

/// The tags the `action` steps running the action add, for roll, choice and changes steps.
fn push_added_tags(frame: &Frame<'_>, step: &Step, tags: &mut Vec<Tag>) {
    if matches!(
        step.kind,
        StepKind::Roll | StepKind::Choice | StepKind::Changes
    ) {
        for t in &frame.extra_tags {
            push_tag(tags, t);
        }
    }
}

fn push_tag(out: &mut Vec<Tag>, tag: &str) {
    if !out.iter().any(|t| **t == *tag) {
        out.push(ocf_formula::value::shared(tag));
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

/// A value as formula text (the standard printer's literals, [`Value::literal`]).
pub fn literal_text(value: &Value) -> Result<String, ActionError> {
    value.literal().ok_or_else(|| {
        ActionError::new(
            "type-mismatch",
            "a map has no literal to pass on in a change",
        )
    })
}
