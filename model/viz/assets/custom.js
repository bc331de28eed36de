// airace: start downloading plotly.js (served by the app from the plotly package) as the page opens, in parallel
// with the app; the first chart (plotly_chart.vue) runs it once the page has been drawn, so the month, the
// scoreboard and the controls do not wait for plotly.js to be parsed.
window.airacePlotlySource = fetch(((window.solara && window.solara.rootPath) || "") + "/static/assets/plotly.min.js")
    .then((response) => {
        if (!response.ok) throw new Error("plotly.min.js: HTTP " + response.status);
        return response.blob();
    });
