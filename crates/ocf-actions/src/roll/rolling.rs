//! Rolling (EA "Rolling"): dice items rolled in order by ocf-dice, given faces first, then faces
//! from the checkpoint (the dice function under an automatic policy, the app's answers when
//! paused); then multiply, the total and its bounds, and the tallies.

use ocf_formula::decimal::Millionths;
use std::collections::VecDeque;

use ocf_dice::{DiceError, DiceFunction, DiceLimits, FaceReason, FaceRequest};
use ocf_model::Op;
use serde_json::{Value as Json, json};

use super::build::Built;
use crate::checkpoint::Checkpoints;
use crate::error::ActionError;
use crate::run::Stop;
use crate::state::Then;

/// A rolled roll, before it is classified.
pub struct Rolled {
    pub items: Vec<ocf_dice::RollItem>,
    pub total: i64,
    pub unbounded: i64,
    pub bounds: Vec<Json>,
    pub tallies: Vec<(String, i64)>,
    /// The faces supplied (by the engine or the app), for the log.
    pub supplied: Vec<i64>,
    pub by: &'static str,
}

/// Where one roll's faces come from.
struct Source<'c, 'r> {
    checkpoints: &'c mut Checkpoints<'r>,
    mode: Then,
    /// Each item's given faces and, when paused, its answered initial faces.
    given: VecDeque<i64>,
    initial: VecDeque<i64>,
    /// Faces answered for extra dice (rerolls, explosions), in order.
    extra: VecDeque<i64>,
    supplied: Vec<i64>,
    path: String,
    /// Set when a pause needs an extra face: the request.
    needs: Option<FaceRequest>,
    mismatch: Option<ActionError>,
}

impl DiceFunction for Source<'_, '_> {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        if request.reason == FaceReason::Initial
            && let Some(face) = self.given.pop_front()
        {
            return Ok(face);
        }
        let face = match self.mode {
            Then::Auto => self.checkpoints.engine_face(request)?,
            Then::Pause if request.reason == FaceReason::Initial => self
                .initial
                .pop_front()
                .ok_or(DiceError::NoMoreFaces { request: *request })?,
            Then::Pause => {
                if self.extra.is_empty() {
                    match self.checkpoints.take_answer() {
                        None => {
                            self.needs = Some(*request);
                            return Err(DiceError::NoMoreFaces { request: *request });
                        }
                        Some(answer) => {
                            match crate::replay::expect_answer(answer, "dice", &self.path) {
                                Ok(a) => self.extra.extend(a.faces.clone().unwrap_or_default()),
                                Err(e) => {
                                    self.mismatch = Some(e);
                                    return Err(DiceError::NoMoreFaces { request: *request });
                                }
                            }
                        }
                    }
                }
                self.extra
                    .pop_front()
                    .ok_or(DiceError::NoMoreFaces { request: *request })?
            }
        };
        self.supplied.push(face);
        Ok(face)
    }
}

fn sides_json(die: ocf_syntax::dice::Die) -> Json {
    match die {
        ocf_syntax::dice::Die::Sides(s) => json!(s),
        ocf_syntax::dice::Die::Percent => json!(100),
        ocf_syntax::dice::Die::Fate => json!("F"),
    }
}

fn dice_error(e: DiceError) -> ActionError {
    match e {
        DiceError::SafetyLimitExceeded { limit, max } => {
            ActionError::new("safety-limit-exceeded", format!("{limit} ({max}) reached"))
                .with("limit", limit)
        }
        DiceError::InvalidFace { face, .. } => {
            ActionError::new("invalid-face", format!("{face} is not a face of the die"))
                .with("face", face)
        }
        other => ActionError::new("dice-error", format!("{other:?}")),
    }
}

/// Rolls the built roll. `need` makes the pause's `needs` object without its `dice` (step, action,
/// summary), completed here when the roll pauses: made only then.
pub fn roll(
    checkpoints: &mut Checkpoints<'_>,
    built: &mut Built<'_>,
    path: &str,
    need: impl FnOnce() -> serde_json::Map<String, Json>,
    rounding: ocf_model::Rounding,
) -> Result<Rolled, Stop> {
    let has_dice = built.items.iter().any(|i| i.term.is_some());
    let mode = if has_dice {
        checkpoints.decide("roll", &built.tags, path)
    } else {
        Then::Auto
    };
    // When paused, the first answer gives every initial face not given, item by item.
    let mut initial_per_item: Vec<VecDeque<i64>> = vec![VecDeque::new(); built.items.len()];
    let mut by = "engine";
    if mode == Then::Pause {
        let wanted: Vec<(usize, u32)> = built
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let term = item.term.as_ref()?;
                let n = term.count.saturating_sub(item.given.len() as u32);
                (n > 0).then_some((i, n))
            })
            .collect();
        let total: u32 = wanted.iter().map(|(_, n)| n).sum();
        if total > 0 {
            by = "app";
            let Some(answer) = checkpoints.take_answer() else {
                let mut need = need();
                need.insert(
                    "dice".into(),
                    Json::Array(
                        wanted
                            .iter()
                            .map(|(i, n)| {
                                let die = built.items[*i].term.as_ref().expect("dice").die;
                                json!({ "item": i, "count": n, "sides": sides_json(die) })
                            })
                            .collect(),
                    ),
                );
                return Err(Stop::Pause(Json::Object(need)));
            };
            let answer = crate::replay::expect_answer(answer, "dice", path)?;
            let faces = answer.faces.clone().unwrap_or_default();
            if faces.len() != total as usize {
                return Err(ActionError::new(
                    "answer-mismatch",
                    format!(
                        "the roll needs {total} faces, the answer gives {}",
                        faces.len()
                    ),
                )
                .with("step", path)
                .with("expected", total)
                .into());
            }
            let mut it = faces.into_iter();
            for (i, n) in wanted {
                initial_per_item[i] = it.by_ref().take(n as usize).collect();
            }
        }
    }
    let limits = DiceLimits::default();
    let mut items = Vec::new();
    let mut supplied = Vec::new();
    let mut extra = VecDeque::new();
    // The built items become the rolled ones: moved, not copied (the roll step reads only their
    // count and which had dice after this).
    for (index, item) in std::mem::take(&mut built.items).into_iter().enumerate() {
        let Some(term) = &item.term else {
            items.push(*item.item);
            continue;
        };
        let mut source = Source {
            checkpoints: &mut *checkpoints,
            mode,
            given: item.given.iter().copied().collect(),
            initial: std::mem::take(&mut initial_per_item[index]),
            extra: std::mem::take(&mut extra),
            supplied: Vec::new(),
            path: path.to_owned(),
            needs: None,
            mismatch: None,
        };
        let result = ocf_dice::roll_term(term, index, &mut source, &limits);
        extra = std::mem::take(&mut source.extra);
        supplied.extend(source.supplied.iter().copied());
        let (needs, mismatch) = (source.needs, source.mismatch.take());
        if let (Err(_), Some(m)) = (&result, mismatch) {
            return Err(m.into());
        }
        let rolled = match result {
            Ok(r) => r,
            Err(DiceError::NoMoreFaces { request }) if needs.is_some() => {
                let mut need = need();
                need.insert(
                    "dice".into(),
                    json!([{ "item": index, "count": 1, "sides": sides_json(request.die) }]),
                );
                need.insert("reason".into(), json!(request.reason.as_str()));
                return Err(Stop::Pause(Json::Object(need)));
            }
            Err(e) => return Err(dice_error(e).into()),
        };
        let mut out = *item.item;
        out.value = rolled.value;
        out.modifiers = rolled.modifiers;
        let mut faces = rolled.faces.unwrap_or_default();
        for face in faces.iter_mut().take(item.given.len()) {
            face.set = true;
        }
        if let Some((before, sources)) = &item.pool {
            for (k, src) in sources.iter().enumerate() {
                if let Some(face) = faces.get_mut(*before as usize + k) {
                    face.source = Some(src.clone());
                }
            }
        }
        out.faces = Some(faces);
        items.push(out);
    }
    finish(items, built, rounding, supplied, by)
}

/// The rolled items multiplied (each not marked `multiplied: false`, by every factor in turn),
/// then the total and its bounds.
pub(crate) fn finish(
    mut items: Vec<ocf_dice::RollItem>,
    built: &Built<'_>,
    rounding: ocf_model::Rounding,
    supplied: Vec<i64>,
    by: &'static str,
) -> Result<Rolled, Stop> {
    for item in items.iter_mut() {
        multiply(item, built, rounding)?;
    }
    let unbounded = items
        .iter()
        .map(|i| i.value)
        .fold(0i64, i64::saturating_add);
    let mut total = unbounded;
    let mut bounds = Vec::new();
    if let Some((_, v, src)) = built
        .bounds
        .iter()
        .filter(|(op, _, _)| *op == Op::AtLeast)
        .max_by_key(|(_, v, _)| *v)
        && *v > total
    {
        total = *v;
        bounds.push(json!({ "source": src, "op": "atLeast", "value": v }));
    }
    if let Some((_, v, src)) = built
        .bounds
        .iter()
        .filter(|(op, _, _)| *op == Op::AtMost)
        .min_by_key(|(_, v, _)| *v)
        && *v < total
    {
        total = *v;
        bounds.push(json!({ "source": src, "op": "atMost", "value": v }));
    }
    Ok(Rolled {
        items,
        total,
        unbounded,
        bounds,
        tallies: Vec::new(),
        supplied,
        by,
    })
}

/// One item multiplied by the roll's factors in turn, unless it is marked `multiplied: false`.
/// Each product is kept to six places, then rounded by the effect's `rounding`, else the game's
/// (EA "Rolling", Multiply; EF "Rounding": 50 x 0.14 rounded up is 7).
pub(crate) fn multiply(
    item: &mut ocf_dice::RollItem,
    built: &Built<'_>,
    rounding: ocf_model::Rounding,
) -> Result<(), Stop> {
    if item.multiplied == Some(false) {
        return Ok(());
    }
    for factor in &built.multiply {
        let rounding = factor.rounding.unwrap_or(rounding);
        let product = Millionths::of_int(item.value)
            .checked_mul(factor.exact)
            .and_then(|m| match rounding {
                ocf_model::Rounding::Ceil => m.ceil(),
                ocf_model::Rounding::Round => m.round(),
                ocf_model::Rounding::Floor => m.floor(),
            })
            .map_err(|_| {
                Stop::Fail(ActionError::new(
                    "arithmetic-overflow",
                    "a multiplied roll item is too large",
                ))
            })?;
        item.value = product;
        item.factor = Some(item.factor.unwrap_or(1.0) * factor.reported);
    }
    Ok(())
}
