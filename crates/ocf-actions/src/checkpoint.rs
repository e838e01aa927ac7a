//! Checkpoints and the policy (DA "Checkpoints and policy"; EA's lost
//! `#checkpoints-and-the-policy`, reconstructed in docs/spec/engine-interface.md): whether a roll,
//! choice or allocate step pauses or continues by itself, the answers a replay takes in order,
//! and the engine's own faces, kept so a replay never rolls them again.

use ocf_dice::{DiceError, DiceFunction, FaceRequest};

use crate::state::{Answer, Policy, Then};

pub struct Checkpoints<'r> {
    pub policy: &'r Policy,
    /// The call's answers, borrowed from its input (a continue's: the state's, then its own).
    pub answers: Vec<&'r Answer>,
    /// The next answer to take.
    pub next: usize,
    /// The faces the engine rolled in earlier calls, then the ones it rolls in this one.
    pub rolled: Vec<i64>,
    pub rolled_next: usize,
    pub dice: &'r mut dyn DiceFunction,
    /// Set when the run works out the odds (`odds`): rolls and handoffs branch there instead.
    pub odds: Option<&'r mut dyn crate::branching::Branch>,
}

impl<'r> Checkpoints<'r> {
    pub fn new(
        policy: &'r Policy,
        answers: Vec<&'r Answer>,
        rolled: Vec<i64>,
        dice: &'r mut dyn DiceFunction,
    ) -> Checkpoints<'r> {
        Checkpoints {
            policy,
            answers,
            next: 0,
            rolled,
            rolled_next: 0,
            dice,
            odds: None,
        }
    }

    /// The policy's decision for a checkpoint: the first rule that matches, else the kind's
    /// default. A rule matches by kind, by tags (one of the rule's matching one of the step's) and
    /// by the step's full path.
    pub fn decide(&self, kind: &str, tags: &[crate::tag::Tag], path: &str) -> Then {
        for rule in &self.policy.rules {
            if rule.kind.as_deref().is_some_and(|k| k != kind) {
                continue;
            }
            if rule.step.as_deref().is_some_and(|s| s != path) {
                continue;
            }
            if !rule.tags.is_empty()
                && !rule
                    .tags
                    .iter()
                    .any(|r| tags.iter().any(|t| ocf_model::tag_matches(r, t)))
            {
                continue;
            }
            return rule.then;
        }
        match kind {
            "roll" => self.policy.dice,
            "choice" => self.policy.choices,
            _ => self.policy.allocations,
        }
    }

    /// The next recorded answer, if any is left.
    pub fn take_answer(&mut self) -> Option<&'r Answer> {
        let answer = *self.answers.get(self.next)?;
        self.next += 1;
        Some(answer)
    }

    /// A face the engine supplies itself: one rolled in an earlier call, else the dice function's.
    pub fn engine_face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        if let Some(face) = self.rolled.get(self.rolled_next) {
            self.rolled_next += 1;
            return Ok(*face);
        }
        let face = self.dice.face(request)?;
        self.rolled.push(face);
        self.rolled_next += 1;
        Ok(face)
    }
}
