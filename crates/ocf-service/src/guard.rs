//! What every request passes before it reaches a route: the `Host` it was sent to (DNS
//! rebinding), its `Origin` (cross-site writes), a write's content type (form posts), who sends it
//! (a bearer token or a session cookie; nobody is asked on the open service) and how long it may
//! take. Each refusal is the service's error shape with its code.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::accounts::{Who, who_by_secret};
use crate::app::App;
use crate::error::ApiError;

/// The session cookie's name.
pub const COOKIE: &str = "ocf_session";

/// Who may reach the service and from where: set by [`crate::serve`] from the address it listens
/// on, the accounts in the store and `ocf serve`'s flags.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// No account is configured and the service listens on loopback: everyone who reaches it is
    /// the gamemaster.
    pub open: bool,
    /// Host names besides IP addresses and `localhost` that requests may be sent to (those of
    /// `--public-url`).
    pub hosts: Vec<String>,
    /// Origins whose pages may write (those of `--public-url`), besides the page's own.
    pub origins: Vec<String>,
    /// Origins allowed cross-origin requests (CORS, `--cors`); none by default.
    pub cors: Vec<String>,
    /// Whether the session cookie is `Secure` (anything but plain loopback).
    pub secure_cookie: bool,
    /// Whether players may roll their own dice (`--player-dice`): a player's policy may then pause
    /// for dice; otherwise the service rolls every die of a player's action.
    pub player_dice: bool,
    /// How long a request may take, its body's reading included.
    pub request_timeout: Duration,
    /// How long a connection may take to send a request's headers.
    pub header_timeout: Duration,
}

impl Settings {
    pub fn new() -> Settings {
        Settings {
            request_timeout: Duration::from_secs(60),
            header_timeout: Duration::from_secs(10),
            ..Settings::default()
        }
    }
}

fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    ApiError::new(status, code, message, "").into_response()
}

/// The host name a request was sent to, lowercase, without its port.
fn host_name(authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    if let Some(rest) = authority.strip_prefix('[') {
        return format!("[{}]", rest.split(']').next().unwrap_or_default());
    }
    authority
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map(|(host, _)| host.to_owned())
        .unwrap_or(authority)
}

/// A `Host` that no DNS name of an attacker's can be: an IP address, `localhost`, or a name the
/// service was told it is reached by.
fn host_allowed(settings: &Settings, name: &str) -> bool {
    name == "localhost"
        || name
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok()
        || settings.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
}

fn authority_of(request: &Request) -> Option<String> {
    request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()))
}

/// An `Origin` allowed: the page's own (its authority is the `Host` the request was sent to), one
/// of `--public-url`'s, or one CORS was opened to.
fn origin_allowed(settings: &Settings, origin: &str, authority: &str) -> bool {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    if settings
        .origins
        .iter()
        .chain(&settings.cors)
        .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(&origin))
    {
        return true;
    }
    match origin.split_once("://") {
        Some((scheme, rest)) if scheme == "http" || scheme == "https" => {
            rest == authority.trim().to_ascii_lowercase()
        }
        _ => false,
    }
}

fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn is_json(headers: &HeaderMap) -> Option<bool> {
    headers.get(header::CONTENT_TYPE).map(|v| {
        v.to_str()
            .ok()
            .and_then(|v| v.split(';').next())
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    })
}

fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// The secret after `Bearer ` in `Authorization`.
fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
}

/// The session cookie's secret.
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// Who sends the request: the open service's one person, a token's or a session's user, or
/// nobody (`None`). A token or cookie that logs in as nobody is refused rather than ignored.
fn who(app: &App, headers: &HeaderMap) -> Result<Option<Who>, ApiError> {
    if app.settings().open {
        return Ok(Some(Who::open()));
    }
    let (kind, secret) = match (bearer(headers), session_cookie(headers)) {
        (Some(token), _) => ("token", token),
        (None, Some(cookie)) => ("session", cookie),
        (None, None) => return Ok(None),
    };
    match who_by_secret(app.store(), kind, &secret) {
        Ok(Some(who)) => Ok(Some(who)),
        Ok(None) if kind == "session" => Ok(None),
        Ok(None) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "the bearer token is unknown, revoked or expired",
            "",
        )),
        Err(error) => Err(ApiError::from(error)),
    }
}

/// Routes anyone may reach: the page (it shows the login form), the login itself, and the API's
/// description (what the API is, not what any character holds: an app's client is generated
/// from it before anyone logs in).
fn public(path: &str) -> bool {
    !path.starts_with("/api/")
        || path == "/api/login"
        || path == "/api/logout"
        || path == "/api/openapi.json"
}

/// The checks, in order: `Host`, `Origin`, a write's content type, who sends it, then the route
/// under the request timeout. The request carries [`Who`] into the routes.
pub async fn check(State(app): State<Arc<App>>, mut request: Request, next: Next) -> Response {
    let settings = app.settings();
    let Some(authority) = authority_of(&request) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "forbidden-host",
            "the request names no host",
        );
    };
    let name = host_name(&authority);
    if !host_allowed(&settings, &name) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "forbidden-host",
            format!(
                "this service is not reached as `{name}`; give it with `ocf serve --public-url` if \
                 it is"
            ),
        );
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("null");
        if !origin_allowed(&settings, origin, &authority) {
            return refuse(
                StatusCode::FORBIDDEN,
                "forbidden-origin",
                format!("requests from pages at `{origin}` are refused"),
            );
        }
    }
    if is_write(request.method()) {
        let json = is_json(request.headers());
        if json == Some(false) || (json.is_none() && has_body(request.headers())) {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                "a write's body is JSON, sent as `Content-Type: application/json`",
            );
        }
    }
    // The store's clients block (PostgreSQL's is synchronous): asked off the async threads.
    let headers = request.headers().clone();
    let asking = app.clone();
    let who = match tokio::task::spawn_blocking(move || who(&asking, &headers)).await {
        Ok(Ok(who)) => who,
        Ok(Err(refused)) => return refused.into_response(),
        Err(error) => return ApiError::internal(error.to_string()).into_response(),
    };
    let path = request.uri().path().to_owned();
    match who {
        Some(who) => {
            request.extensions_mut().insert(who);
        }
        None if public(&path) => {}
        None => {
            let mut refused = refuse(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "log in (`POST /api/login`) or send a bearer token",
            );
            refused.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return refused;
        }
    }
    match tokio::time::timeout(settings.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => refuse(
            StatusCode::REQUEST_TIMEOUT,
            "request-timeout",
            format!(
                "the request took longer than {} s",
                settings.request_timeout.as_secs_f64()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        let settings = Settings {
            hosts: vec!["sheet.example".into()],
            origins: vec!["https://sheet.example".into()],
            ..Settings::new()
        };
        assert_eq!(host_name("127.0.0.1:7878"), "127.0.0.1");
        assert_eq!(host_name("[::1]:7878"), "[::1]");
        assert_eq!(host_name("Evil.Example"), "evil.example");
        assert!(host_allowed(&settings, "127.0.0.1"));
        assert!(host_allowed(&settings, "[::1]"));
        assert!(host_allowed(&settings, "localhost"));
        assert!(host_allowed(&settings, "sheet.example"));
        assert!(!host_allowed(&settings, "evil.example"));
        assert!(origin_allowed(
            &settings,
            "http://127.0.0.1:7878",
            "127.0.0.1:7878"
        ));
        assert!(!origin_allowed(
            &settings,
            "http://127.0.0.1:7879",
            "127.0.0.1:7878"
        ));
        assert!(origin_allowed(
            &settings,
            "https://sheet.example",
            "127.0.0.1:7878"
        ));
        assert!(!origin_allowed(&settings, "null", "127.0.0.1:7878"));
        assert!(!origin_allowed(
            &settings,
            "https://evil.example",
            "127.0.0.1:7878"
        ));
    }
}
