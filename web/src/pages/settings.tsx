export default function P() { return <h1>settings</h1> }
