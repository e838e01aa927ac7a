//! The two remembered parts of computeSheet's output besides the field values (EC computeSheet):
//! what the sheet judges ([`Judged`]: issues, applicable and pending choices) and the rest
//! ([`Rest`]: copies, names, errors, actions, offers). Below [`crate::sheet`], which works them
//! out and assembles the output, and [`crate::option_trials`], which settles the judged part.

use std::sync::Arc;

use ocf_formula::Value;
use serde_json::Value as Json;

use crate::report::RankedIssue;

/// What the sheet judges: the issues, the applicable choices and the pending ones. Its own memo,
/// apart from the rest, so that a listOptions trial, which compares only these and the fields,
/// doesn't work out the copies, actions and offers of every pick.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    pub(crate) issues: Vec<RankedIssue>,
    pub(crate) choices: Vec<Json>,
    pub(crate) pending: Vec<Json>,
    /// The `no-eligible-option` issues listed until trial sheets settle them
    /// ([`crate::option_trials`]); empty once settled.
    pub(crate) unsettled: Vec<crate::choices::Unsettled>,
}

/// Everything of the sheet besides the field values: remembered, so a sheet read again after an
/// edit that none of it read doesn't re-evaluate prerequisites, constraints and actions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rest {
    pub(crate) judged: Arc<Judged>,
    pub(crate) copies: Vec<(String, Vec<(String, Value)>)>,
    pub(crate) copy_names: Vec<(String, String)>,
    pub(crate) errors: Vec<Json>,
    pub(crate) actions: Vec<crate::actions::Listed>,
    pub(crate) offers: Vec<crate::offers::Offer>,
}
