//! The web sheet editor: static files kept in the repository and compiled into the binary, so
//! running it needs no build step and no file next to the binary. For work on the page,
//! `OCF_WEB_DIR=crates/ocf-service/web` makes a debug build read them from that folder at each
//! request instead (a release build always serves the compiled files).

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::app::App;

const INDEX: &str = include_str!("../web/index.html");
const SCRIPT: &str = include_str!("../web/sheet.js");
const STYLE: &str = include_str!("../web/sheet.css");

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/",
            get(|| async { page("index.html", INDEX, "text/html; charset=utf-8") }),
        )
        .route(
            "/sheet.js",
            get(|| async { page("sheet.js", SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/sheet.css",
            get(|| async { page("sheet.css", STYLE, "text/css; charset=utf-8") }),
        )
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
