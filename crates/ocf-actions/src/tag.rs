//! A tag as the runtime holds it ([`Tag`]): below every module that passes tags on.

/// A tag: the rulesets' own names, shared across the process ([`ocf_formula::value::shared`])
/// rather than copied into every step, roll item and value.
pub type Tag = std::sync::Arc<str>;
