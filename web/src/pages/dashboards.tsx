export default function P() { return <h1>dashboards</h1> }
