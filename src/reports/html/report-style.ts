/** report.html's stylesheet, inlined: the page works from a mail attachment, offline. */
export const REPORT_CSS = `
:root{color-scheme:light;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;
--info:#3b6fb6;--ok:#2d8a4e;--warn:#c9720c;--bad:#c23b3b;--odd:#7b4bb3}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1440px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
p{margin:6px 0}
code,.mono,td{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
.muted{color:var(--muted)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:10px 0}
.facts dt{color:var(--muted)}.facts dd{margin:0}
.status{display:inline-block;padding:1px 8px;border-radius:10px;background:var(--soft);border:1px solid var(--line);font-weight:600}
.status-completed{border-color:var(--ok);color:var(--ok)}
.status-failed,.status-interrupted{border-color:var(--bad);color:var(--bad)}
.charts{display:flex;flex-wrap:wrap;gap:8px 32px}
.chart{max-width:100%;height:auto;overflow:visible}
.chart text{font-size:12px;fill:var(--fg)}
.bar-track{fill:var(--soft)}
.bar-muted{fill:#8c959f}.bar-before{fill:#c8d1dc}
.steer-line{stroke:var(--fg);stroke-dasharray:3 3;stroke-width:1}.steer-label{font-size:11px!important;font-weight:600}
.meaning{color:var(--muted);font-size:12px}
.bar-info{fill:var(--info)}.bar-ok{fill:var(--ok)}.bar-warn{fill:var(--warn)}.bar-bad{fill:var(--bad)}.bar-odd{fill:var(--odd)}
.rps{fill:var(--info)}.grid{stroke:var(--line)}.axis{fill:var(--muted)!important;font-size:11px!important}
.mark-429{fill:var(--bad)}.mark-retry{fill:var(--warn)}.mark-ambiguous{fill:var(--odd)}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border-bottom:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
td{unicode-bidi:isolate;overflow-wrap:break-word}
#diff{table-layout:fixed}
#diff td{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;cursor:pointer}
#diff td.open{white-space:normal;overflow-wrap:anywhere;background:var(--soft)}
#diff th{overflow:hidden;vertical-align:bottom;white-space:normal;font-size:.85em}
#diff th:nth-child(1){width:14%}#diff th:nth-child(2),#diff th:nth-child(3){width:6.5%}
#diff th:nth-child(4){width:11%}#diff th:nth-child(5){width:8%}#diff th:nth-child(6){width:11%}
#diff th:nth-child(7){width:7%}#diff th:nth-child(8){width:5%}#diff th:nth-child(9){width:13%}
#diff th:nth-child(10){width:4%}#diff th:nth-child(11){width:8%}#diff th:nth-child(12){width:6%}
.swatch{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}
.swatch.bar-ok{background:var(--ok)}.swatch.bar-bad{background:var(--bad)}.swatch.bar-muted{background:#8c959f}
.swatch.bar-odd{background:var(--odd)}.swatch.bar-warn{background:var(--warn)}
.scroll{overflow-x:auto}
th{background:var(--soft);font-weight:600;white-space:nowrap}
th button{all:unset;cursor:pointer}
th button:focus-visible{outline:2px solid var(--info)}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
.num{text-align:right}
.filters{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;margin:8px 0}
.filters label{display:flex;gap:6px;align-items:center}
.filters input{min-width:260px}
.filters select{max-width:24em}
.pager{display:flex;gap:10px;align-items:center;margin:6px 0}
.note{background:var(--soft);border-left:3px solid var(--warn);padding:6px 10px}
footer{margin-top:30px;color:var(--muted);font-size:12px}
`;
