//! The web sheet editor: static files kept in the repository and compiled into the binary, so
//! running it needs no build step and no file next to the binary. For work on the page,
//! `OCF_WEB_DIR=crates/ocf-service/web` makes a debug build read them from that folder at each
//! request instead (a release build always serves the compiled files).

use std::sync::Arc;

use axum::http::header;
use axum::response::IntoResponse;

use crate::app::App;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

const INDEX: &str = include_str!("../web/index.html");
const SCRIPT: &str = include_str!("../web/sheet.js");
const STYLE: &str = include_str!("../web/sheet.css");

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(index))
        .routes(routes!(script))
        .routes(routes!(style))
}

/// The web sheet editor's page.
#[utoipa::path(get, path = "/", tag = "page",
    responses((status = 200, description = "The page", content_type = "text/html", body = String), crate::openapi::Guarded))]
async fn index() -> impl IntoResponse {
    page("index.html", INDEX, "text/html; charset=utf-8")
}

/// The page's script.
#[utoipa::path(get, path = "/sheet.js", tag = "page",
    responses((status = 200, description = "The script", content_type = "text/javascript", body = String), crate::openapi::Guarded))]
async fn script() -> impl IntoResponse {
    page("sheet.js", SCRIPT, "text/javascript; charset=utf-8")
}

/// The page's style sheet.
#[utoipa::path(get, path = "/sheet.css", tag = "page",
    responses((status = 200, description = "The style sheet", content_type = "text/css", body = String), crate::openapi::Guarded))]
async fn style() -> impl IntoResponse {
    page("sheet.css", STYLE, "text/css; charset=utf-8")
}

fn page(name: &str, body: &'static str, kind: &'static str) -> impl IntoResponse {
    let body = if cfg!(debug_assertions) {
        std::env::var_os("OCF_WEB_DIR")
            .and_then(|dir| std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok())
            .map_or(std::borrow::Cow::Borrowed(body), std::borrow::Cow::Owned)
    } else {
        std::borrow::Cow::Borrowed(body)
    };
    ([(header::CONTENT_TYPE, kind)], body)
}
