// Not a dashboard view: the script of a one-time sign-in link's own page (GET /login?code=…,
// AuthRoutes.loginPage), which posts the code at once. (A link preview that fetches the page
// runs no script, so it cannot use the code up; without scripts, the page's button does this.)
document.getElementById("sign-in")?.submit();
