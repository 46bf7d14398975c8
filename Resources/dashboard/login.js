// The sign-in link's page: post its one-time code at once. (A link preview that fetches the page
// runs no script, so it cannot use the code up; without scripts, the page's button does this.)
document.getElementById("sign-in")?.submit();
