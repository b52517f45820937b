export default function P() { return <h1>insights</h1> }
